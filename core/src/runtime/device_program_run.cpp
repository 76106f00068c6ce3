// DeviceProgramRun: a host program walked on a GPU, stream loops on the pool streams.

#include "runtime/device_program_run.h"

#include <algorithm>

#include "braze/driver/cuda_driver.h"
#include "braze/error.h"
#include "runtime/program_sizes.h"
#include "runtime/stream_pool.h"

namespace braze::runtime_detail {

namespace {

using host::Overloaded;
using host::SlotKind;
using host::ValueRef;

// The thread events this runner records: apart from those of single-device plans, which a
// region's own run may record on the same thread.
constexpr size_t kFirstEvent = 64;

// `from` (dense row-major) into `into` (same sizes: dense, or a slice of a dense tensor along
// one axis, which is rows of contiguous bytes at a pitch), on `stream`: one 2-D copy.
void copyInto(const DeviceTensor& into, const DeviceTensor& from, CUstream stream,
              const std::string& what) {
  BRAZE_INTERNAL_CHECK(into.sizes() == from.sizes() && into.dtype() == from.dtype() &&
                       from.isContiguous())
      << what << " is " << from.describe() << " but its slot is " << into.describe();
  if (into.numel() == 0) return;
  const std::vector<int64_t>& sizes = into.sizes();
  const std::vector<int64_t>& strides = into.strides();
  // The contiguous tail of `into`, then one pitch for everything outside it.
  int64_t k = static_cast<int64_t>(sizes.size());
  int64_t run = 1;
  while (k > 0 &&
         (sizes[static_cast<size_t>(k - 1)] == 1 || strides[static_cast<size_t>(k - 1)] == run)) {
    run *= sizes[static_cast<size_t>(k - 1)];
    --k;
  }
  int64_t rows = 1;
  int64_t pitch = run;
  bool first = true;
  for (int64_t d = k - 1; d >= 0; --d) {
    const auto size = sizes[static_cast<size_t>(d)];
    if (size == 1) continue;
    const auto stride = strides[static_cast<size_t>(d)];
    if (first) {
      pitch = stride;
      first = false;
    } else {
      BRAZE_INTERNAL_CHECK(stride == pitch * rows)
          << what << ": its slot " << into.describe() << " is not rows at one pitch";
    }
    rows *= size;
  }
  const auto element = static_cast<size_t>(sizeInBytes(into.dtype()));
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = from.data();
  copy.srcPitch = static_cast<size_t>(run) * element;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = into.data();
  copy.dstPitch = static_cast<size_t>(pitch) * element;
  copy.WidthInBytes = static_cast<size_t>(run) * element;
  copy.Height = static_cast<size_t>(rows);
  BRAZE_CU(memcpy2DAsync, &copy, stream);
}

}  // namespace

DeviceProgramRun::DeviceProgramRun(const host::HostProgram& program,
                                   const std::vector<FusionArgument>& arguments,
                                   ExpressionEvaluator& extents, int device, CUstream stream,
                                   Launch launch, Communicate communicate, RunTrace* trace,
                                   ProgramPlacement placement)
    : program_(program),
      arguments_(arguments),
      extents_(extents),
      device_(device),
      caller_(stream),
      current_(stream),
      launch_(std::move(launch)),
      communicate_(std::move(communicate)),
      tensors_(static_cast<size_t>(program.num_buffers)),
      pending_(static_cast<size_t>(program.num_buffers), nullptr),
      placement_(std::move(placement)),
      allocations_(static_cast<size_t>(program.num_buffers), nullptr),
      iterations_(program.loops.size()),
      trace_(trace) {
  if (trace_ == nullptr) return;
  trace_->spans.clear();
  BRAZE_CU(eventCreate, &trace_start_, CU_EVENT_DEFAULT);
  BRAZE_CU(eventRecord, trace_start_, caller_);
}

DeviceProgramRun::~DeviceProgramRun() {
  const driver::DriverApi& api = driver::driverApi();
  for (auto& [begin, end] : trace_marks_) {
    (void)api.eventDestroy(begin);
    if (end != nullptr) (void)api.eventDestroy(end);
  }
  if (trace_start_ != nullptr) (void)api.eventDestroy(trace_start_);
  if (pool_used_ == 0) return;
  // Tensors made on a pool stream are freed in that stream's order: it first waits for the
  // caller's stream, where their last readers may be. No throwing from a destructor: a failed
  // call here leaves the run's memory to a later synchronization.
  CUevent done = threadEvent(device_, kFirstEvent);
  if (api.eventRecord(done, caller_) != CUDA_SUCCESS) return;
  const std::vector<CUstream>& pool = poolStreams(device_, pool_used_);
  for (int32_t k = 0; k < pool_used_; ++k) (void)api.streamWaitEvent(pool[k], done, 0);
  if (comm_used_ == 0) return;
  const std::vector<CUstream>& steps = priorityStreams(device_, comm_used_);
  for (int32_t k = 0; k < comm_used_; ++k) (void)api.streamWaitEvent(steps[k], done, 0);
}

std::vector<DeviceTensor> DeviceProgramRun::run() {
  for (const host::Instruction& instruction : program_.instructions) execute(instruction);
  std::vector<DeviceTensor> outputs;
  for (const ValueRef& ref : program_.outputs) {
    // An output on a mesh without this device: an undefined tensor.
    outputs.push_back(held(ref) ? tensorOf(ref, "an output") : DeviceTensor());
  }
  if (trace_ != nullptr) finishTrace();
  return outputs;
}

void DeviceProgramRun::mark(RunTrace::Span::Kind kind, int32_t segment) {
  if (trace_ == nullptr) return;
  CUevent begin = nullptr;
  BRAZE_CU(eventCreate, &begin, CU_EVENT_DEFAULT);
  BRAZE_CU(eventRecord, begin, current_);
  trace_marks_.emplace_back(begin, nullptr);
  trace_->spans.push_back({kind, segment, -1, current_pool_, 0, 0});
}

void DeviceProgramRun::endMark() {
  if (trace_ == nullptr) return;
  CUevent end = nullptr;
  BRAZE_CU(eventCreate, &end, CU_EVENT_DEFAULT);
  BRAZE_CU(eventRecord, end, current_);
  trace_marks_.back().second = end;
}

void DeviceProgramRun::finishTrace() {
  auto since = [&](CUevent event) {
    float ms = 0;
    BRAZE_CU(eventElapsedTime, &ms, trace_start_, event);
    return static_cast<double>(ms) * 1e3;
  };
  for (size_t i = 0; i < trace_marks_.size(); ++i) {
    BRAZE_CU(eventSynchronize, trace_marks_[i].second);
    trace_->spans[i].start_us = since(trace_marks_[i].first);
    trace_->spans[i].end_us = since(trace_marks_[i].second);
  }
}

int64_t DeviceProgramRun::extent(const ValueRef& ref) const {
  return programExtent(program_, extents_, ref);
}

int64_t DeviceProgramRun::sliceLength(int32_t loop) const {
  return loopSliceLength(program_, extents_, loop);
}

// A buffer not written whole gets its memory on the caller's stream, before the loop that
// writes it slice by slice forks its pool streams.
DeviceTensor& DeviceProgramRun::materialized(int32_t buffer) {
  std::optional<DeviceTensor>& tensor = tensors_[static_cast<size_t>(buffer)];
  if (tensor) return *tensor;
  const host::Allocate* allocate = pending_[static_cast<size_t>(buffer)];
  BRAZE_INTERNAL_CHECK(allocate != nullptr) << "a device run: %" << buffer << " has no memory";
  tensor =
      DeviceTensor::emptyOnStream(allocate->dtype, allocationSizes(program_, extents_, *allocate),
                                  allocate->tensor->allocationOrder(), device_, caller_);
  made_.push_back(*tensor);
  return *tensor;
}

FusionArgument DeviceProgramRun::valueOf(const ValueRef& ref) {
  switch (ref.kind) {
    case SlotKind::Input:
      return arguments_[static_cast<size_t>(ref.index)];
    case SlotKind::Buffer:
      return materialized(ref.index);
    case SlotKind::Extent:
      return ScalarValue(extent(ref));
    case SlotKind::SliceLength:
      return ScalarValue(iterations_[static_cast<size_t>(ref.index)].length);
  }
  return ScalarValue(int64_t{0});
}

DeviceTensor DeviceProgramRun::tensorOf(const ValueRef& ref, const char* what) {
  FusionArgument value = valueOf(ref);
  auto* tensor = std::get_if<DeviceTensor>(&value);
  BRAZE_INTERNAL_CHECK(tensor != nullptr) << "a device run: " << what << " is not a device tensor";
  return std::move(*tensor);
}

// Slot `buffer` holds `value`: it becomes the slot's tensor, or, for a view (a slice a loop
// writes, a ring slot), is copied where the slot is.
void DeviceProgramRun::writeInto(int32_t buffer, DeviceTensor value, const std::string& what) {
  made_.push_back(value);
  std::optional<DeviceTensor>& slot = tensors_[static_cast<size_t>(buffer)];
  if (!slot && pending_[static_cast<size_t>(buffer)] != nullptr &&
      pending_[static_cast<size_t>(buffer)]->ring_slots == 0) {
    slot = std::move(value);
    return;
  }
  DeviceTensor& target = slot ? *slot : materialized(buffer);
  if (target.data() == value.data() && target.sizes() == value.sizes()) return;  // in place
  copyInto(target, value, current_, what);
}

bool DeviceProgramRun::held(const ValueRef& ref) const {
  return ref.kind != SlotKind::Buffer ||
         placement_.holdsBuffer(allocations_[static_cast<size_t>(ref.index)]);
}

DeviceTensor DeviceProgramRun::destinationOf(int32_t buffer) const {
  const std::optional<DeviceTensor>& slot = tensors_[static_cast<size_t>(buffer)];
  return slot ? *slot : DeviceTensor();
}

CUstream DeviceProgramRun::poolStream(int32_t index) {
  pool_used_ = std::max(pool_used_, index + 1);
  return poolStreams(device_, pool_used_)[static_cast<size_t>(index)];
}

// Pool stream `pool_index` starts after what the caller's stream has enqueued so far.
void DeviceProgramRun::fork(int32_t pool_index) {
  CUevent caller = threadEvent(device_, kFirstEvent);
  BRAZE_CU(eventRecord, caller, caller_);
  BRAZE_CU(streamWaitEvent, poolStream(pool_index), caller, 0);
}

// The caller's stream waits for the first `used` pool streams.
void DeviceProgramRun::join(int32_t used) {
  for (int32_t k = 0; k < used; ++k) {
    CUevent done = threadEvent(device_, kFirstEvent + 1 + static_cast<size_t>(k));
    BRAZE_CU(eventRecord, done, poolStream(k));
    BRAZE_CU(streamWaitEvent, caller_, done, 0);
  }
}

// A step in a stream loop runs on its lane's high-priority stream, between an event from the
// lane (its input is ready) and one back to it (its readers wait): its kernels get SMs as
// soon as any free up, instead of after every CTA of a GEMM enqueued before it, so the transfer
// of chunk i + 1 runs while chunk i computes. Steps go in program order, each after the one
// before: chunk i's transfer has the links to itself and ends early, instead of every chunk's
// sharing them and ending late.
void DeviceProgramRun::communicate(const host::Communicate& c) {
  std::optional<DeviceTensor> part;
  if (held(c.input)) part = tensorOf(c.input, "a communicated part");
  // A device receiving what it does not hold gets memory for it first, on the caller's
  // stream's order like every buffer.
  if (!part && held({SlotKind::Buffer, c.output})) (void)materialized(c.output);
  const DeviceTensor into = destinationOf(c.output);
  const CUstream lane = current_;
  CUstream on = lane;
  if (current_pool_ >= 0) {
    comm_used_ = std::max(comm_used_, current_pool_ + 1);
    on = priorityStreams(device_, comm_used_)[static_cast<size_t>(current_pool_)];
    CUevent ready = threadEvent(device_, kFirstEvent + 32 + static_cast<size_t>(current_pool_));
    BRAZE_CU(eventRecord, ready, lane);
    BRAZE_CU(streamWaitEvent, on, ready, 0);
  }
  CUevent previous = threadEvent(device_, kFirstEvent - 1);
  if (steps_enqueued_ > 0 && last_step_stream_ != on) BRAZE_CU(streamWaitEvent, on, previous, 0);
  current_ = on;
  mark(RunTrace::Span::Kind::Communicate, c.segment);
  std::optional<DeviceTensor> result =
      communicate_(c, part ? &*part : nullptr, into.defined() ? &into : nullptr, on,
                   current_pool_ >= 0 ? host::Overlap::BesideCompute : host::Overlap::Alone);
  endMark();
  current_ = lane;
  BRAZE_CU(eventRecord, previous, on);
  last_step_stream_ = on;
  ++steps_enqueued_;
  if (on != lane) BRAZE_CU(streamWaitEvent, lane, previous, 0);
  if (result)
    writeInto(c.output, std::move(*result), "resharding segment " + std::to_string(c.segment));
}

void DeviceProgramRun::runLoop(const host::ForLoop& f) {
  const host::Loop& loop = program_.loops[static_cast<size_t>(f.loop)];
  // The buffers the body slices get their memory now, on the caller's stream, before any
  // pool stream forks from it.
  for (const host::Instruction& inner : f.body) {
    if (const auto* select = std::get_if<host::Select>(&inner);
        select != nullptr && select->source.kind == SlotKind::Buffer && held(select->source))
      materialized(select->source.index);
  }
  const int64_t whole = extent(loop.extent);
  const int64_t length = sliceLength(f.loop);
  forked_.assign(static_cast<size_t>(loop.streams), false);
  Iteration& at = iterations_[static_cast<size_t>(f.loop)];
  for (int64_t i = 0; i < loop.slicing.slices(whole); ++i) {
    at = {i, i * length, std::min(length, whole - i * length)};
    for (const host::Instruction& inner : f.body) execute(inner);
  }
}

void DeviceProgramRun::execute(const host::Instruction& instruction) {
  std::visit(
      Overloaded{
          [&](const host::Allocate& a) {
            allocations_[static_cast<size_t>(a.buffer)] = &a;
            if (a.alias_input >= 0) {
              tensors_[static_cast<size_t>(a.buffer)] =
                  std::get<DeviceTensor>(arguments_[static_cast<size_t>(a.alias_input)]);
            } else {
              pending_[static_cast<size_t>(a.buffer)] = &a;
            }
          },
          [&](const host::Deallocate& d) { tensors_[static_cast<size_t>(d.buffer)].reset(); },
          [&](const host::LaunchKernel& l) {
            if (!placement_.runsSegment(l.segment)) return;
            std::vector<FusionArgument> inputs;
            for (const ValueRef& ref : l.inputs) inputs.push_back(valueOf(ref));
            std::vector<DeviceTensor> into;
            for (int32_t buffer : l.outputs) into.push_back(destinationOf(buffer));
            mark(RunTrace::Span::Kind::Launch, l.segment);
            std::vector<DeviceTensor> results = launch_(l, inputs, into, current_);
            endMark();
            for (size_t j = 0; j < l.outputs.size(); ++j) {
              writeInto(l.outputs[j], std::move(results[j]),
                        "segment " + std::to_string(l.segment) + " output " + std::to_string(j));
            }
          },
          [&](const host::Copy&) {
            BRAZE_INTERNAL_CHECK(false) << "a device run stages no host inputs";
          },
          [&](const host::Select& s) {
            if (!held(s.source)) {
              // A slice of a tensor this device does not hold: not held either.
              allocations_[static_cast<size_t>(s.view)] =
                  allocations_[static_cast<size_t>(s.source.index)];
              return;
            }
            const Iteration& at = iterations_[static_cast<size_t>(s.loop)];
            const DeviceTensor source = tensorOf(s.source, "a sliced tensor");
            const int64_t start =
                s.ring_slots > 0 ? (at.index % s.ring_slots) * sliceLength(s.loop) : at.start;
            std::vector<int64_t> sizes = source.sizes();
            sizes[static_cast<size_t>(s.axis)] = at.length;
            const auto offset =
                static_cast<CUdeviceptr>(start * source.strides()[static_cast<size_t>(s.axis)] *
                                         sizeInBytes(source.dtype()));
            tensors_[static_cast<size_t>(s.view)] =
                DeviceTensor::borrow(source.dtype(), std::move(sizes), source.strides(),
                                     source.data() + offset, device_, source.owner());
          },
          [&](const host::GetCurrentStream&) {},
          [&](const host::SetCurrentStream& s) {
            if (s.stream.saved >= 0) {
              current_ = caller_;
              current_pool_ = -1;
              return;
            }
            const host::Loop& loop = program_.loops[static_cast<size_t>(s.stream.loop)];
            current_pool_ = static_cast<int32_t>(
                iterations_[static_cast<size_t>(s.stream.loop)].index % loop.streams);
            current_ = poolStream(current_pool_);
          },
          [&](const host::Synchronize& s) {
            if (s.stream.every) {
              const host::Loop& loop = program_.loops[static_cast<size_t>(s.stream.loop)];
              join(static_cast<int32_t>(
                  std::min<int64_t>(loop.streams, loop.slicing.slices(extent(loop.extent)))));
              return;
            }
            // A pool stream waits for the caller once per loop: later iterations on it are
            // ordered after that wait already.
            if (current_pool_ < 0 || forked_[static_cast<size_t>(current_pool_)]) return;
            forked_[static_cast<size_t>(current_pool_)] = true;
            fork(current_pool_);
          },
          [&](const host::Communicate& c) { communicate(c); },
          // Each step is enqueued on the stream of its readers: ordered before them already.
          [&](const host::Wait&) {},
          [&](const host::ForLoop& f) { runLoop(f); },
      },
      instruction);
}

}  // namespace braze::runtime_detail
