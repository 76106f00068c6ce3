// Freezing a host program into an ExecutionPlan for one exact argument signature: stream
// loops unrolled (one frozen launch per iteration and segment), buffer sizes in bytes, each
// launch's parameters packed once with the byte offsets of the slices it reads and writes.

#include <algorithm>
#include <set>

#include "braze/eval/strided_layout.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "runtime/evaluated_sizes.h"

namespace braze {
namespace {

using Kind = KernelParameter::Kind;
using host::Overloaded;
using host::SlotKind;
using host::ValueRef;
using Step = ExecutionPlan::Step;

// Where planning pretends buffers live: aligned like every pool allocation.
constexpr CUdeviceptr kPlanningPointer = 256;

size_t alignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// A tensor slot while planning: its memory (an input or a buffer, and a byte offset into it
// for a slice) and its shape.
struct PlannedTensor {
  ValueRef base;
  int64_t byte_offset = 0;
  DataType dtype = DataType::Float32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

struct Iteration {
  int64_t index = 0;
  int64_t start = 0;
  int64_t length = 0;
};

class PlanBuilder {
 public:
  PlanBuilder(const host::HostProgram& program,
              const std::vector<FusionKernelRuntime::SegmentKernel>& kernels,
              const std::vector<FusionArgument>& arguments, const RunContext& context,
              ExecutionPlan& plan)
      : program_(program),
        kernels_(kernels),
        arguments_(arguments),
        context_(context),
        plan_(plan),
        slots_(static_cast<size_t>(program.num_buffers)),
        iterations_(program.loops.size()) {
    plan_.device = context.device;
    plan_.buffers.resize(static_cast<size_t>(program.num_buffers));
    for (const Val* extent : program.extents)
      extents_.push_back(toInt64(context.extents->evaluateOrThrow(extent, "extent")));
  }

  void build() {
    for (const host::Instruction& instruction : program_.instructions) visit(instruction);
    plan_.outputs = program_.outputs;
    plan_.host_results = program_.host_results;
  }

 private:
  int64_t extent(const ValueRef& ref) const { return extents_[static_cast<size_t>(ref.index)]; }

  int64_t sliceLength(int32_t loop) const {
    const host::Loop& l = program_.loops[static_cast<size_t>(loop)];
    const int64_t whole = extent(l.extent);
    return std::min(l.slicing.sliceLength(whole), whole);
  }

  PlannedTensor tensorOf(const ValueRef& ref) const {
    if (ref.kind == SlotKind::Buffer) return slots_[static_cast<size_t>(ref.index)];
    const FusionArgument& argument = arguments_[static_cast<size_t>(ref.index)];
    if (const auto* host = std::get_if<HostTensor>(&argument))
      return {ref, 0, host->dtype(), host->sizes(), host->strides()};
    const auto& tensor = std::get<DeviceTensor>(argument);
    return {ref, 0, tensor.dtype(), tensor.sizes(), tensor.strides()};
  }

  // A copy between memories: one contiguous block, laid out alike at both ends.
  void copy(const host::Copy& c) {
    const PlannedTensor source = tensorOf(c.source);
    const PlannedTensor target = tensorOf(c.target);
    BRAZE_INTERNAL_CHECK(source.sizes == target.sizes && source.dtype == target.dtype)
        << "a host program copies between shapes";
    if (c.direction == host::CopyDirection::HostToDevice) {
      BRAZE_USER_CHECK(denseStrides(source.sizes, {}) == source.strides ||
                       numelOf(source.sizes) <= 1)
          << "input " << source.base.index << " is a host tensor the run copies to the device in "
          << "slices, which needs it contiguous (row-major); pass a contiguous tensor";
    }
    // Both ends of one tensor's layout (a slice of it along its outermost dim in memory).
    BRAZE_INTERNAL_CHECK(isDenseLayout(source.sizes, source.strides) && sameStrides(source, target))
        << "a host program copies between tensors that are not one dense block laid out alike";
    int32_t fusion_position = -1;
    if (c.direction == host::CopyDirection::HostToDevice) {
      fusion_position = source.base.index;
    } else if (c.direction == host::CopyDirection::DeviceToHost) {
      for (size_t j = 0; j < program_.outputs.size(); ++j) {
        if (program_.outputs[j] == target.base) fusion_position = static_cast<int32_t>(j);
      }
    }
    plan_.steps.push_back(
        {Step::Kind::Copy, 0, static_cast<int32_t>(plan_.copies.size()), stream_});
    plan_.copies.push_back(
        {c.direction, source.base, source.byte_offset, target.base, target.byte_offset,
         static_cast<size_t>(numelOf(source.sizes) * sizeInBytes(source.dtype)), fusion_position});
  }

  // Equal strides on every dim that has more than one element.
  static bool sameStrides(const PlannedTensor& a, const PlannedTensor& b) {
    for (size_t d = 0; d < a.sizes.size(); ++d) {
      if (a.sizes[d] != 1 && a.strides[d] != b.strides[d]) return false;
    }
    return true;
  }

  // What the executor plans a launch with: the tensor at its planning address (an input's
  // real one), or the scalar.
  ExecutorArgument argumentOf(const ValueRef& ref) const {
    switch (ref.kind) {
      case SlotKind::Input: {
        const FusionArgument& argument = arguments_[static_cast<size_t>(ref.index)];
        if (const auto* scalar = std::get_if<ScalarValue>(&argument)) return *scalar;
        return std::get<DeviceTensor>(argument);
      }
      case SlotKind::Buffer: {
        const PlannedTensor& t = slots_[static_cast<size_t>(ref.index)];
        const CUdeviceptr base =
            t.base.kind == SlotKind::Input
                ? std::get<DeviceTensor>(arguments_[static_cast<size_t>(t.base.index)]).data()
                : kPlanningPointer;
        return DeviceTensor::borrow(t.dtype, t.sizes, t.strides,
                                    base + static_cast<CUdeviceptr>(t.byte_offset), context_.device,
                                    nullptr);
      }
      case SlotKind::Extent:
        return ScalarValue(extent(ref));
      case SlotKind::SliceLength:
        return ScalarValue(iterations_[static_cast<size_t>(ref.index)].length);
    }
    return ScalarValue(int64_t{0});
  }

  void visit(const host::Instruction& instruction) {
    std::visit(
        Overloaded{
            [&](const host::Allocate& a) { allocate(a); },
            [&](const host::Deallocate& d) {
              plan_.steps.push_back({Step::Kind::Deallocate, d.buffer, 0, -1});
            },
            [&](const host::LaunchKernel& l) { launch(l); },
            [&](const host::Copy& c) { copy(c); },
            [&](const host::Select& s) {
              const PlannedTensor source = tensorOf(s.source);
              const Iteration& at = iterations_[static_cast<size_t>(s.loop)];
              const int64_t start =
                  s.ring_slots > 0 ? (at.index % s.ring_slots) * sliceLength(s.loop) : at.start;
              PlannedTensor view = source;
              const auto axis = static_cast<size_t>(s.axis);
              view.sizes[axis] = at.length;
              view.byte_offset += start * source.strides[axis] * sizeInBytes(source.dtype);
              slots_[static_cast<size_t>(s.view)] = std::move(view);
            },
            [&](const host::GetCurrentStream&) {},
            [&](const host::Communicate&) {
              BRAZE_INTERNAL_CHECK(false) << "a single-device plan holds a communication: "
                                             "sharded fusions run on the multi-device runtime";
            },
            [&](const host::Wait&) {},
            [&](const host::SetCurrentStream& s) {
              if (s.stream.saved >= 0) {
                stream_ = -1;
                return;
              }
              const int32_t streams = program_.loops[static_cast<size_t>(s.stream.loop)].streams;
              stream_ = static_cast<int32_t>(iterations_[static_cast<size_t>(s.stream.loop)].index %
                                             streams);
              plan_.pool_streams = std::max(plan_.pool_streams, stream_ + 1);
            },
            [&](const host::Synchronize& s) {
              if (s.stream.every) {
                const host::Loop& loop = program_.loops[static_cast<size_t>(s.stream.loop)];
                const auto used = static_cast<int32_t>(
                    std::min<int64_t>(loop.streams, loop.slicing.slices(extent(loop.extent))));
                if (used > 0) plan_.steps.push_back({Step::Kind::Join, 0, 0, used});
              } else if (stream_ >= 0 && forked_.insert(stream_).second) {
                // A pool stream waits for the caller once per loop: later iterations on it are
                // ordered after that wait already.
                plan_.steps.push_back({Step::Kind::Fork, 0, 0, stream_});
              }
            },
            [&](const host::ForLoop& f) {
              const host::Loop& loop = program_.loops[static_cast<size_t>(f.loop)];
              const int64_t whole = extent(loop.extent);
              const int64_t length = sliceLength(f.loop);
              forked_.clear();
              for (int64_t i = 0; i < loop.slicing.slices(whole); ++i) {
                iterations_[static_cast<size_t>(f.loop)] = {i, i * length,
                                                            std::min(length, whole - i * length)};
                for (const host::Instruction& inner : f.body) visit(inner);
              }
            },
        },
        instruction);
  }

  void allocate(const host::Allocate& a) {
    ExecutionPlan::Buffer& buffer = plan_.buffers[static_cast<size_t>(a.buffer)];
    buffer.dtype = a.dtype;
    buffer.sizes = runtime_detail::evaluatedSizes(*a.tensor, *context_.extents);
    if (a.ring_slots > 0) {
      const host::Loop& loop = program_.loops[static_cast<size_t>(a.ring_loop)];
      buffer.sizes[static_cast<size_t>(a.ring_axis)] =
          std::min<int64_t>(a.ring_slots, loop.slicing.slices(extent(loop.extent))) *
          sliceLength(a.ring_loop);
    }
    // Dense in the tensor's allocation order (row-major unless stride_order gave another):
    // the order the kernel that writes it computes its offsets in.
    buffer.strides = denseStrides(buffer.sizes, a.tensor->allocationOrder());
    buffer.bytes = static_cast<size_t>(numelOf(buffer.sizes) * sizeInBytes(buffer.dtype));
    buffer.alias_input = a.alias_input;
    buffer.host = a.host;
    slots_[static_cast<size_t>(a.buffer)] = {a.alias_input >= 0
                                                 ? ValueRef{SlotKind::Input, a.alias_input}
                                                 : ValueRef{SlotKind::Buffer, a.buffer},
                                             0, buffer.dtype, buffer.sizes, buffer.strides};
    // An input's memory (sizes checked in RunContext::of) is not allocated.
    if (buffer.alias_input < 0) plan_.steps.push_back({Step::Kind::Allocate, a.buffer, 0, -1});
  }

  void launch(const host::LaunchKernel& launch) {
    KernelExecutor& executor = *kernels_[static_cast<size_t>(launch.segment)].executor;
    const GeneratedKernel& generated = executor.generatedKernel();
    std::vector<ExecutorArgument> inputs;
    for (const ValueRef& ref : launch.inputs) inputs.push_back(argumentOf(ref));
    const LaunchPlan launch_plan = executor.plan(inputs);
    std::vector<DeviceTensor> outputs;
    for (int32_t buffer : launch.outputs)
      outputs.push_back(std::get<DeviceTensor>(argumentOf({SlotKind::Buffer, buffer})));
    std::vector<CUdeviceptr> allocations(generated.parameters.size(), kPlanningPointer);
    // Packing checks each vector access's alignment on the planning addresses, which carry the
    // slices' offsets: a slice a kernel cannot read or write with its vectors is refused here.
    KernelArguments packed = executor.packArguments(launch_plan, inputs, outputs, allocations);

    FrozenLaunch frozen;
    frozen.segment = launch.segment;
    frozen.launch = launch_plan.launch;
    frozen.parameters.assign(packed.storage().begin(), packed.storage().end());
    auto pointerTo = [&](size_t offset, const ValueRef& slot, bool tensor_map) {
      if (slot.kind != SlotKind::Buffer) return FrozenLaunch::Pointer{offset, slot, tensor_map, 0};
      const PlannedTensor& t = slots_[static_cast<size_t>(slot.index)];
      return FrozenLaunch::Pointer{offset, t.base, tensor_map, t.byte_offset};
    };
    for (size_t i = 0; i < generated.parameters.size(); ++i) {
      const KernelParameter& p = generated.parameters[i];
      const size_t offset = packed.offset(i);
      frozen.parameter_offsets.push_back(offset);
      const auto position = static_cast<size_t>(p.fusion_position);
      switch (p.kind) {
        case Kind::InputTensor:
        case Kind::InputTensorMap:
          frozen.pointers.push_back(
              pointerTo(offset, launch.inputs[position], p.kind == Kind::InputTensorMap));
          break;
        case Kind::OutputTensor:
        case Kind::OutputTensorMap: {
          const ValueRef slot{SlotKind::Buffer, launch.outputs[position]};
          const PlannedTensor& t = slots_[static_cast<size_t>(slot.index)];
          BRAZE_INTERNAL_CHECK(p.kind == Kind::OutputTensorMap ||
                               launch_plan.parameters[i].sizes == t.sizes)
              << "segment " << launch.segment << " output " << position
              << ": the kernel computes other sizes than the original fusion";
          frozen.pointers.push_back(pointerTo(offset, slot, p.kind == Kind::OutputTensorMap));
          break;
        }
        case Kind::GlobalBuffer:
          frozen.temporaries.push_back(
              {offset, static_cast<size_t>(numelOf(launch_plan.parameters[i].sizes) *
                                           sizeInBytes(p.dtype))});
          break;
        case Kind::Workspace:
          frozen.workspaces.push_back({offset, plan_.workspace_bytes});
          plan_.workspace_bytes =
              alignUp(plan_.workspace_bytes +
                          static_cast<size_t>(launch_plan.parameters[i].workspace_bytes),
                      256);
          break;
        case Kind::InputScalar:
          break;
      }
    }
    if (launch_plan.launch.isEmpty()) {
      for (size_t j = 0; j < outputs.size(); ++j) {
        BRAZE_USER_CHECK(outputs[j].numel() == 0)
            << "segment " << launch.segment << " launches no threads for these inputs ("
            << launch_plan.launch.toString() << ") but its output " << j
            << " has elements it would leave unwritten; inputs with zero-size dims need "
               "another schedule for this fusion";
      }
    } else {
      frozen.function = executor.prepareLaunch(launch_plan);
    }
    plan_.steps.push_back(
        {Step::Kind::Launch, 0, static_cast<int32_t>(plan_.launches.size()), stream_});
    plan_.launches.push_back(std::move(frozen));
  }

  const host::HostProgram& program_;
  const std::vector<FusionKernelRuntime::SegmentKernel>& kernels_;
  const std::vector<FusionArgument>& arguments_;
  const RunContext& context_;
  ExecutionPlan& plan_;
  std::vector<PlannedTensor> slots_;
  std::vector<Iteration> iterations_;  // per loop: the iteration being planned
  std::vector<int64_t> extents_;
  int32_t stream_ = -1;       // -1: the caller's stream, else a pool stream
  std::set<int32_t> forked_;  // pool streams that waited for the caller in this loop
};

}  // namespace

std::shared_ptr<const ExecutionPlan> FusionKernelRuntime::plan(
    const std::vector<FusionArgument>& arguments, const RunContext& context) const {
  auto plan = std::make_shared<ExecutionPlan>();
  PlanBuilder(program_, kernels_, arguments, context, *plan).build();
  return plan;
}

}  // namespace braze
