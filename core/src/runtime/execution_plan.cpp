// Running frozen plans (built in plan_builder.cpp) on a stream and the pool streams of their
// loops: allocations, launches, copies, and the events between the streams.

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/pinned_host_memory.h"
#include "braze/driver/primary_context.h"
#include "braze/eval/strided_layout.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "runtime/evaluated_sizes.h"
#include "runtime/pageable_staging.h"
#include "runtime/stream_pool.h"

namespace braze {

namespace runtime_detail {

namespace {

// The first `count` streams of one process-wide set per device, of the context's greatest
// priority or of the default one: made once, never destroyed (a plan may be replayed until
// the process ends).
const std::vector<CUstream>& processStreams(int device, int32_t count, bool high_priority) {
  static std::mutex mutex;
  static std::map<std::pair<int, bool>, std::vector<CUstream>> sets;
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<CUstream>& streams = sets[{device, high_priority}];
  const driver::DriverApi& api = driver::driverApi();
  while (static_cast<int32_t>(streams.size()) < count) {
    int least = 0;
    int greatest = 0;
    if (high_priority) {
      driver::checkDriver(api.ctxGetStreamPriorityRange(&least, &greatest),
                          "cuCtxGetStreamPriorityRange", "while making a stream loop's streams");
    }
    CUstream stream = nullptr;
    driver::checkDriver(
        api.streamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, high_priority ? greatest : 0),
        "cuStreamCreateWithPriority", "while making a stream loop's streams");
    streams.push_back(stream);
  }
  return streams;
}

}  // namespace

const std::vector<CUstream>& poolStreams(int device, int32_t count) {
  return processStreams(device, count, false);
}

const std::vector<CUstream>& priorityStreams(int device, int32_t count) {
  return processStreams(device, count, true);
}

// Events a thread records to order its streams: one per pool stream and one for the caller's.
// Recording an event again is safe once a wait has been enqueued on it: the wait keeps the
// work recorded at the time it was enqueued.
CUevent threadEvent(int device, size_t index) {
  thread_local std::map<int, std::vector<CUevent>> events;
  std::vector<CUevent>& list = events[device];
  while (list.size() <= index) {
    CUevent event = nullptr;
    driver::checkDriver(driver::driverApi().eventCreate(&event, CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate", "while ordering the streams of a stream loop");
    list.push_back(event);
  }
  return list[index];
}

}  // namespace runtime_detail

namespace {

using runtime_detail::poolStreams;
using runtime_detail::threadEvent;

using Kind = KernelParameter::Kind;
using host::Overloaded;
using host::SlotKind;
using host::ValueRef;
using Step = ExecutionPlan::Step;

// Fills a RunTrace: an event recorded on the caller's stream when the run starts, and one on
// each step's stream before and after it; finish() waits for the last and reads the times.
class TraceRecorder {
 public:
  TraceRecorder(RunTrace& trace, CUstream caller) : trace_(trace) {
    trace_.spans.clear();
    start_ = record(caller);
  }
  ~TraceRecorder() {
    for (CUevent event : events_) driver::driverApi().eventDestroy(event);
  }
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  void begin(RunTrace::Span::Kind kind, int32_t segment, int32_t tensor, int32_t stream_index,
             CUstream stream) {
    trace_.spans.push_back({kind, segment, tensor, stream_index, 0, 0});
    marks_.push_back({record(stream), nullptr});
  }
  void end(CUstream stream) { marks_.back().second = record(stream); }
  void finish() {
    for (auto& [begin, end] : marks_) BRAZE_CU(eventSynchronize, end);
    for (size_t i = 0; i < marks_.size(); ++i) {
      trace_.spans[i].start_us = microsecondsSinceStart(marks_[i].first);
      trace_.spans[i].end_us = microsecondsSinceStart(marks_[i].second);
    }
  }

 private:
  CUevent record(CUstream stream) {
    CUevent event = nullptr;
    BRAZE_CU(eventCreate, &event, CU_EVENT_DEFAULT);
    events_.push_back(event);
    BRAZE_CU(eventRecord, event, stream);
    return event;
  }
  double microsecondsSinceStart(CUevent event) const {
    float ms = 0;
    BRAZE_CU(eventElapsedTime, &ms, start_, event);
    return static_cast<double>(ms) * 1e3;
  }

  RunTrace& trace_;
  CUevent start_ = nullptr;
  std::vector<CUevent> events_;
  std::vector<std::pair<CUevent, CUevent>> marks_;
};

}  // namespace

std::vector<DeviceTensor> ExecutionPlan::outputTensors(
    const std::vector<FusionArgument>& arguments,
    std::span<const std::shared_ptr<driver::DeviceMemory>> memory) const {
  std::vector<DeviceTensor> tensors;
  tensors.reserve(outputs.size());
  for (const host::ValueRef& ref : outputs) {
    if (ref.kind == host::SlotKind::Input) {
      tensors.push_back(std::get<DeviceTensor>(arguments[static_cast<size_t>(ref.index)]));
      continue;
    }
    const Buffer& buffer = buffers[static_cast<size_t>(ref.index)];
    const std::shared_ptr<driver::DeviceMemory>& block = memory[static_cast<size_t>(ref.index)];
    tensors.push_back(DeviceTensor::borrow(buffer.dtype, buffer.sizes, buffer.strides,
                                           block ? block->pointer() : 0, device, block));
  }
  return tensors;
}

std::vector<HostTensor> ExecutionPlan::hostOutputTensors(
    const std::vector<FusionArgument>& arguments,
    std::span<const std::shared_ptr<void>> host_memory) const {
  std::vector<HostTensor> tensors;
  tensors.reserve(outputs.size());
  for (const host::ValueRef& ref : outputs) {
    if (ref.kind == host::SlotKind::Input) {
      // A host input written in place: the caller's tensor.
      tensors.push_back(std::get<HostTensor>(arguments[static_cast<size_t>(ref.index)]));
      continue;
    }
    BRAZE_INTERNAL_CHECK(ref.kind == host::SlotKind::Buffer &&
                         buffers[static_cast<size_t>(ref.index)].host)
        << "a plan returning host tensors has an output in device memory";
    const Buffer& buffer = buffers[static_cast<size_t>(ref.index)];
    const std::shared_ptr<void>& block = host_memory[static_cast<size_t>(ref.index)];
    tensors.push_back(
        HostTensor::borrow(buffer.dtype, buffer.sizes, buffer.strides, block.get(), block));
  }
  return tensors;
}

double RunTrace::overlapMicroseconds(Span::Kind a, Span::Kind b) const {
  double total = 0;
  for (const Span& x : spans) {
    if (x.kind != a) continue;
    for (const Span& y : spans) {
      if (y.kind != b || x.stream == y.stream || (a == b && &y <= &x)) continue;
      total += std::max(0.0, std::min(x.end_us, y.end_us) - std::max(x.start_us, y.start_us));
    }
  }
  return total;
}

CUdeviceptr ExecutionPlan::workspaceFor(CUstream stream) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [owner, memory] : workspaces_) {
    if (owner == stream) return memory->pointer();
  }
  // Not stream-ordered: the stream may be gone when the plan is evicted.
  std::shared_ptr<driver::DeviceMemory> memory =
      driver::DeviceMemory::allocate(device, workspace_bytes);
  BRAZE_CU(memsetD8Async, memory->pointer(), 0, workspace_bytes, stream);
  workspaces_.emplace_back(stream, memory);
  return memory->pointer();
}

void FrozenLaunch::Pointer::patch(std::vector<std::byte>& parameters, CUdeviceptr address) const {
  if (address != 0) address += static_cast<CUdeviceptr>(byte_offset);
  if (!tensor_map) {
    std::memcpy(parameters.data() + offset, &address, sizeof(address));
    return;
  }
  CUtensorMap map;  // the driver wants it 64-byte aligned, which the packed bytes need not be
  std::memcpy(&map, parameters.data() + offset, sizeof(map));
  if (std::all_of(std::begin(map.opaque), std::end(map.opaque),
                  [](auto word) { return word == 0; }))
    return;
  driver::checkDriver(
      driver::driverApi().tensorMapReplaceAddress(&map, reinterpret_cast<void*>(address)),
      "cuTensorMapReplaceAddress", "while re-addressing a tensor map parameter");
  std::memcpy(parameters.data() + offset, &map, sizeof(map));
}

namespace {

// Memory of the buffers of one run, reused by every run on this thread: the hit path allocates
// no bookkeeping. Device buffers, and page-locked host buffers (results copied back).
struct RunMemory {
  std::vector<std::shared_ptr<driver::DeviceMemory>> device;
  std::vector<std::shared_ptr<void>> host;
};

RunMemory& threadRunMemory() {
  thread_local RunMemory memory;
  return memory;
}

// Enqueues `plan`'s steps on `stream` and the pool streams; `memory` holds the memory of each
// buffer the run did not free (its outputs).
// `staging`: pageable host inputs staged in page-locked memory, and results written back into
// them through it (runToHost's runs).
void enqueuePlan(const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments,
                 CUstream stream, RunTrace* trace, std::span<const DeviceTensor> into,
                 RunMemory& memory, runtime_detail::PageableStaging* staging = nullptr) {
  driver::makePrimaryContextCurrent(plan.device);
  const driver::DriverApi& api = driver::driverApi();
  thread_local std::vector<std::byte> parameters;
  thread_local std::vector<void*> parameter_pointers;
  thread_local std::vector<std::shared_ptr<driver::DeviceMemory>> temporaries;
  // Each stream's workspace block, looked up (under the plan's lock) once per run: lane 0 is
  // the caller's stream, lane k + 1 pool stream k.
  thread_local std::vector<CUdeviceptr> workspaces;
  std::vector<std::shared_ptr<driver::DeviceMemory>>& buffers = memory.device;
  buffers.assign(plan.buffers.size(), nullptr);
  if (!plan.copies.empty()) memory.host.assign(plan.buffers.size(), nullptr);
  // Outputs the caller gave memory for: their buffers take it instead of an allocation.
  // Empty unless the caller gave memory: the usual run touches none of it.
  thread_local std::vector<std::shared_ptr<driver::DeviceMemory>> given;
  given.clear();
  if (!into.empty()) given.resize(plan.buffers.size());
  for (size_t j = 0; j < into.size() && j < plan.outputs.size(); ++j) {
    const ValueRef& ref = plan.outputs[j];
    if (!into[j].defined() || into[j].numel() == 0 || ref.kind != SlotKind::Buffer) continue;
    const ExecutionPlan::Buffer& buffer = plan.buffers[static_cast<size_t>(ref.index)];
    if (buffer.alias_input >= 0 || buffer.host || buffer.dtype != into[j].dtype() ||
        buffer.sizes != into[j].sizes() || buffer.strides != into[j].strides() ||
        into[j].device() != plan.device)
      continue;
    // Kernels read their inputs as memory nothing writes during the run (read-only loads,
    // later segments reading an input after earlier ones stored): an output in an input's
    // memory is an alias the fusion declares (aliasOutputToInput), not a place to write.
    const CUdeviceptr begin = into[j].data();
    const CUdeviceptr end = begin + static_cast<CUdeviceptr>(into[j].storageBytes());
    for (size_t i = 0; i < arguments.size(); ++i) {
      const auto* input = std::get_if<DeviceTensor>(&arguments[i]);
      if (input == nullptr || input->numel() == 0) continue;
      const CUdeviceptr input_end = input->data() + static_cast<CUdeviceptr>(input->storageBytes());
      BRAZE_USER_CHECK(end <= input->data() || input_end <= begin)
          << "outputs_into[" << j << "] (" << into[j].describe()
          << ") overlaps the memory of input " << i << " (" << input->describe()
          << "); to write an output into an input, declare it with aliasOutputToInput, or give "
             "memory apart from the inputs";
    }
    given[static_cast<size_t>(ref.index)] =
        driver::DeviceMemory::borrow(plan.device, into[j].data(), buffer.bytes, into[j].owner());
  }
  workspaces.assign(static_cast<size_t>(plan.pool_streams) + 1, 0);
  auto pointerOf = [&](const ValueRef& ref) -> CUdeviceptr {
    if (ref.kind == SlotKind::Buffer) {
      const auto& block = buffers[static_cast<size_t>(ref.index)];
      return block ? block->pointer() : 0;
    }
    return std::get<DeviceTensor>(arguments[static_cast<size_t>(ref.index)]).data();
  };
  auto devicePointerOf = [&](const ValueRef& ref, int64_t offset) {
    return pointerOf(ref) + static_cast<CUdeviceptr>(offset);
  };
  auto hostPointerOf = [&](const ValueRef& ref, int64_t offset) -> char* {
    char* base = ref.kind == SlotKind::Buffer
                     ? static_cast<char*>(memory.host[static_cast<size_t>(ref.index)].get())
                     : static_cast<char*>(
                           std::get<HostTensor>(arguments[static_cast<size_t>(ref.index)]).data());
    return base + offset;
  };
  const std::vector<CUstream>* pool =
      plan.pool_streams > 0 ? &poolStreams(plan.device, plan.pool_streams) : nullptr;
  auto streamOf = [&](int32_t k) { return k < 0 ? stream : (*pool)[static_cast<size_t>(k)]; };
  std::optional<TraceRecorder> recorder;
  if (trace != nullptr) recorder.emplace(*trace, stream);
  for (const ExecutionPlan::Step& step : plan.steps) {
    const bool timed =
        recorder && (step.kind == Step::Kind::Launch || step.kind == Step::Kind::Copy);
    if (timed) {
      const bool is_launch = step.kind == Step::Kind::Launch;
      const ExecutionPlan::MemoryCopy* copy =
          is_launch ? nullptr : &plan.copies[static_cast<size_t>(step.launch)];
      recorder->begin(is_launch ? RunTrace::Span::Kind::Launch
                      : copy->direction == host::CopyDirection::DeviceToHost
                          ? RunTrace::Span::Kind::CopyToHost
                          : RunTrace::Span::Kind::Copy,
                      is_launch ? plan.launches[static_cast<size_t>(step.launch)].segment : -1,
                      is_launch ? -1 : copy->fusion_position, step.stream, streamOf(step.stream));
    }
    switch (step.kind) {
      case Step::Kind::Allocate:
        if (plan.buffers[static_cast<size_t>(step.buffer)].host) {
          memory.host[static_cast<size_t>(step.buffer)] =
              driver::allocatePinnedHost(plan.buffers[static_cast<size_t>(step.buffer)].bytes);
          break;
        }
        buffers[static_cast<size_t>(step.buffer)] =
            !given.empty() && given[static_cast<size_t>(step.buffer)]
                ? std::move(given[static_cast<size_t>(step.buffer)])
                : driver::DeviceMemory::allocateOnStream(
                      plan.device, plan.buffers[static_cast<size_t>(step.buffer)].bytes, stream);
        break;
      case Step::Kind::Deallocate:
        buffers[static_cast<size_t>(step.buffer)].reset();
        break;
      case Step::Kind::Copy: {
        const ExecutionPlan::MemoryCopy& c = plan.copies[static_cast<size_t>(step.launch)];
        if (c.bytes == 0) break;
        const CUstream on = streamOf(step.stream);
        switch (c.direction) {
          case host::CopyDirection::HostToDevice: {
            const char* staged =
                staging != nullptr ? staging->source(static_cast<size_t>(step.launch)) : nullptr;
            BRAZE_CU(memcpyHtoDAsync, devicePointerOf(c.target, c.target_offset),
                     staged != nullptr ? staged : hostPointerOf(c.source, c.source_offset), c.bytes,
                     on);
            break;
          }
          case host::CopyDirection::DeviceToHost: {
            char* staged =
                staging != nullptr ? staging->target(static_cast<size_t>(step.launch)) : nullptr;
            BRAZE_CU(memcpyDtoHAsync,
                     staged != nullptr ? staged : hostPointerOf(c.target, c.target_offset),
                     devicePointerOf(c.source, c.source_offset), c.bytes, on);
            if (staged != nullptr) staging->copiedToHost(static_cast<size_t>(step.launch), on);
            break;
          }
          case host::CopyDirection::DeviceToDevice:
            BRAZE_CU(memcpyDtoDAsync, devicePointerOf(c.target, c.target_offset),
                     devicePointerOf(c.source, c.source_offset), c.bytes, on);
            break;
        }
        break;
      }
      case Step::Kind::Fork: {
        // The pool stream starts after what the caller's stream enqueued so far.
        CUevent caller = threadEvent(plan.device, 0);
        BRAZE_CU(eventRecord, caller, stream);
        BRAZE_CU(streamWaitEvent, streamOf(step.stream), caller, 0);
        break;
      }
      case Step::Kind::Join:
        for (int32_t k = 0; k < step.stream; ++k) {
          CUevent done = threadEvent(plan.device, static_cast<size_t>(k) + 1);
          BRAZE_CU(eventRecord, done, streamOf(k));
          BRAZE_CU(streamWaitEvent, stream, done, 0);
        }
        break;
      case Step::Kind::Launch: {
        const FrozenLaunch& launch = plan.launches[static_cast<size_t>(step.launch)];
        if (launch.function == nullptr) break;  // no threads, nothing to write
        const CUstream on = streamOf(step.stream);
        parameters.assign(launch.parameters.begin(), launch.parameters.end());
        auto patch = [&](size_t offset, CUdeviceptr pointer) {
          std::memcpy(parameters.data() + offset, &pointer, sizeof(pointer));
        };
        for (const FrozenLaunch::Pointer& pointer : launch.pointers)
          pointer.patch(parameters, pointerOf(pointer.source));
        for (const FrozenLaunch::Temporary& temporary : launch.temporaries) {
          temporaries.push_back(
              driver::DeviceMemory::allocateOnStream(plan.device, temporary.bytes, on));
          patch(temporary.offset, temporaries.back()->pointer());
        }
        if (!launch.workspaces.empty()) {
          // Launches on different streams may run at once: each stream has its own block.
          CUdeviceptr& workspace = workspaces[static_cast<size_t>(step.stream + 1)];
          if (workspace == 0) workspace = plan.workspaceFor(on);
          for (const FrozenLaunch::Workspace& region : launch.workspaces)
            patch(region.parameter_offset, workspace + region.block_offset);
        }
        parameter_pointers.resize(launch.parameter_offsets.size());
        for (size_t i = 0; i < launch.parameter_offsets.size(); ++i)
          parameter_pointers[i] = parameters.data() + launch.parameter_offsets[i];
        DriverLaunchConfig launch_config(launch.launch, on);
        const CUresult result = api.launchKernelEx(&launch_config.config, launch.function,
                                                   parameter_pointers.data(), nullptr);
        if (result != CUDA_SUCCESS) {
          driver::checkDriver(result, "cuLaunchKernelEx",
                              "while launching the kernel of segment " +
                                  std::to_string(step.launch) + " with " +
                                  launch.launch.toString());
        }
        temporaries.clear();  // freed in stream order, after the launch
        break;
      }
    }
    if (timed) recorder->end(streamOf(step.stream));
  }
  if (recorder) recorder->finish();
}

}  // namespace

std::vector<DeviceTensor> FusionKernelRuntime::run(const ExecutionPlan& plan,
                                                   const std::vector<FusionArgument>& arguments,
                                                   CUstream stream, RunTrace* trace,
                                                   std::span<const DeviceTensor> into) const {
  RunMemory& memory = threadRunMemory();
  enqueuePlan(plan, arguments, stream, trace, into, memory);
  std::vector<DeviceTensor> outputs = plan.outputTensors(arguments, memory.device);
  memory.device.clear();  // the outputs keep theirs; intermediates were freed by Deallocate
  return outputs;
}

std::vector<HostTensor> FusionKernelRuntime::runToHost(const ExecutionPlan& plan,
                                                       const std::vector<FusionArgument>& arguments,
                                                       CUstream stream, RunTrace* trace) const {
  RunMemory& memory = threadRunMemory();
  // Destroyed (its page-locked blocks back to the pool) after the stream is synchronized.
  runtime_detail::PageableStaging staging(plan, arguments);
  try {
    enqueuePlan(plan, arguments, stream, trace, {}, memory, &staging);
  } catch (...) {
    // Copies already enqueued may still read the staging blocks.
    driver::driverApi().streamSynchronize(stream);
    throw;
  }
  // The results are read by the caller as soon as this returns: those written back into
  // pageable inputs too.
  BRAZE_CU(streamSynchronize, stream);
  staging.finish();
  std::vector<HostTensor> outputs = plan.hostOutputTensors(arguments, memory.host);
  memory.device.clear();
  memory.host.clear();
  return outputs;
}

}  // namespace braze
