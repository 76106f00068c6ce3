#pragma once

// A host program run on the CPU: every tensor a host tensor, stream loops slice by slice in
// order, each launch and communication by a hook (the reference evaluator for a segment,
// a simulated mesh for a resharding step). FusionKernelRuntime::runOnHost and the multi-device
// executor's host path both run their programs with it.

#include <algorithm>
#include <functional>
#include <optional>

#include "braze/error.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/eval/strided_layout.h"
#include "braze/host/host_program.h"
#include "braze/host/resharding.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "runtime/program_placement.h"
#include "runtime/program_sizes.h"

namespace braze::runtime_detail {

using host::Overloaded;
using host::SlotKind;
using host::ValueRef;

// One iteration of a running loop: where its slices start and how long they are.
struct Iteration {
  int64_t index = 0;
  int64_t start = 0;
  int64_t length = 0;
};

class HostProgramRun {
 public:
  /// Runs segment `launch.segment` on host values: its outputs, in order.
  using Launch = std::function<std::vector<HostTensor>(const host::LaunchKernel& launch,
                                                       std::vector<EvaluatorArgument> inputs)>;
  /// Runs resharding segment `communicate.segment` on this device's part: its result.
  /// `part` is null on a device that receives a tensor it does not hold (send / receive
  /// between meshes); nullopt: this device keeps no result (it only sent).
  using Communicate = std::function<std::optional<HostTensor>(const host::Communicate& communicate,
                                                              const HostTensor* part)>;

  HostProgramRun(const host::HostProgram& program, const std::vector<FusionArgument>& arguments,
                 ExpressionEvaluator& extents, Launch launch, Communicate communicate = {},
                 ProgramPlacement placement = {})
      : program_(program),
        arguments_(arguments),
        extents_(extents),
        launch_(std::move(launch)),
        communicate_(std::move(communicate)),
        placement_(std::move(placement)),
        allocations_(static_cast<size_t>(program.num_buffers), nullptr),
        tensors_(static_cast<size_t>(program.num_buffers)),
        pending_(static_cast<size_t>(program.num_buffers), nullptr),
        iterations_(program.loops.size()) {}

  std::vector<HostTensor> run() {
    for (const host::Instruction& instruction : program_.instructions) execute(instruction);
    std::vector<HostTensor> outputs;
    for (const ValueRef& ref : program_.outputs) {
      // An output on a mesh without this device: an empty tensor.
      outputs.push_back(held(ref) ? std::get<HostTensor>(valueOf(ref))
                                  : HostTensor::empty(DataType::Float32, {0}));
    }
    return outputs;
  }

 private:
  int64_t extent(const ValueRef& ref) const { return programExtent(program_, extents_, ref); }
  int64_t sliceLength(int32_t loop) const { return loopSliceLength(program_, extents_, loop); }

  // A buffer allocated but not written whole yet gets its memory when a slice of it is
  // selected (a loop writes it slice by slice).
  HostTensor& materialized(int32_t buffer) {
    std::optional<HostTensor>& tensor = tensors_[static_cast<size_t>(buffer)];
    if (tensor) return *tensor;
    const host::Allocate* allocate = pending_[static_cast<size_t>(buffer)];
    BRAZE_INTERNAL_CHECK(allocate != nullptr) << "runOnHost: %" << buffer << " has no memory";
    const std::vector<int64_t> sizes = allocationSizes(program_, extents_, *allocate);
    tensor = HostTensor::empty(allocate->dtype, sizes, allocate->tensor->allocationOrder());
    return *tensor;
  }

  EvaluatorArgument valueOf(const ValueRef& ref) {
    switch (ref.kind) {
      case SlotKind::Input: {
        const FusionArgument& argument = arguments_[static_cast<size_t>(ref.index)];
        if (const auto* scalar = std::get_if<ScalarValue>(&argument)) return *scalar;
        return std::get<HostTensor>(argument);
      }
      case SlotKind::Buffer:
        return materialized(ref.index);
      case SlotKind::Extent:
        return ScalarValue(extent(ref));
      case SlotKind::SliceLength:
        return ScalarValue(iterations_[static_cast<size_t>(ref.index)].length);
    }
    return ScalarValue(int64_t{0});
  }

  // Whether this device holds slot `ref`'s tensor (inputs and slots without an allocation:
  // yes).
  bool held(const ValueRef& ref) const {
    return ref.kind != SlotKind::Buffer ||
           placement_.holdsBuffer(allocations_[static_cast<size_t>(ref.index)]);
  }

  void launch(const host::LaunchKernel& launch) {
    if (!placement_.runsSegment(launch.segment)) return;
    std::vector<EvaluatorArgument> inputs;
    for (const ValueRef& ref : launch.inputs) inputs.push_back(valueOf(ref));
    const std::vector<HostTensor> results = launch_(launch, std::move(inputs));
    for (size_t j = 0; j < launch.outputs.size(); ++j) {
      writeInto(launch.outputs[j], results[j],
                "segment " + std::to_string(launch.segment) + " output " + std::to_string(j));
    }
  }

  // Slot `buffer` holds `value`: it becomes the slot's tensor, or, for a view, an input written
  // in place or a buffer a loop writes, is written where the slot is.
  void writeInto(int32_t buffer, const HostTensor& value, const std::string& what) {
    std::optional<HostTensor>& slot = tensors_[static_cast<size_t>(buffer)];
    const host::Allocate* pending = pending_[static_cast<size_t>(buffer)];
    // Taken as it is where it lies as the buffer's tensor does (a step's result is row-major
    // where the buffer wants its split axis outermost: copied in below).
    if (!slot && pending != nullptr && pending->ring_slots == 0 &&
        isDenseInOrder(value.sizes(), value.strides(), pending->tensor->allocationOrder())) {
      slot = value;
      return;
    }
    HostTensor& into = slot ? *slot : materialized(buffer);
    BRAZE_INTERNAL_CHECK(into.sizes() == value.sizes())
        << "runOnHost: " << what << " is " << value.describe() << " but its slot is "
        << into.describe();
    for (int64_t i = 0; i < into.numel(); ++i) into.setFlat(i, value.atFlat(i));
  }

  void execute(const host::Instruction& instruction) {
    std::visit(
        Overloaded{
            [&](const host::Allocate& a) {
              allocations_[static_cast<size_t>(a.buffer)] = &a;
              if (a.alias_input >= 0) {
                // The input's memory: what is written there, the caller sees.
                tensors_[static_cast<size_t>(a.buffer)] =
                    std::get<HostTensor>(arguments_[static_cast<size_t>(a.alias_input)]);
              } else {
                pending_[static_cast<size_t>(a.buffer)] = &a;
              }
            },
            [&](const host::Deallocate& d) { tensors_[static_cast<size_t>(d.buffer)].reset(); },
            [&](const host::LaunchKernel& l) { launch(l); },
            [&](const host::Copy& c) {
              const HostTensor source = std::get<HostTensor>(valueOf(c.source));
              if (c.target.kind == SlotKind::Input) {
                // Into a host input written in place: the caller's memory.
                HostTensor into =
                    std::get<HostTensor>(arguments_[static_cast<size_t>(c.target.index)]);
                for (int64_t i = 0; i < into.numel(); ++i) into.setFlat(i, source.atFlat(i));
                return;
              }
              writeInto(c.target.index, source, "a copy");
            },
            [&](const host::Select& s) {
              if (!held(s.source)) {
                // A slice of a tensor this device does not hold: not held either.
                allocations_[static_cast<size_t>(s.view)] =
                    allocations_[static_cast<size_t>(s.source.index)];
                return;
              }
              const Iteration& at = iterations_[static_cast<size_t>(s.loop)];
              HostTensor source = std::get<HostTensor>(valueOf(s.source));
              const int64_t start =
                  s.ring_slots > 0 ? (at.index % s.ring_slots) * sliceLength(s.loop) : at.start;
              tensors_[static_cast<size_t>(s.view)] = source.narrowed(s.axis, start, at.length);
            },
            // One CPU thread runs everything in order: streams change nothing here.
            [&](const host::GetCurrentStream&) {},
            [&](const host::SetCurrentStream&) {},
            [&](const host::Synchronize&) {},
            [&](const host::Communicate& c) {
              BRAZE_INTERNAL_CHECK(communicate_ != nullptr)
                  << "a single-device plan holds a communication: sharded fusions run on the "
                     "multi-device runtime";
              std::optional<HostTensor> part;
              if (held(c.input)) part = std::get<HostTensor>(valueOf(c.input));
              std::optional<HostTensor> result = communicate_(c, part ? &*part : nullptr);
              if (result)
                writeInto(c.output, *result, "resharding segment " + std::to_string(c.segment));
            },
            // One CPU thread runs everything in order: a step is complete when it returns.
            [&](const host::Wait&) {},
            [&](const host::ForLoop& f) {
              const host::Loop& loop = program_.loops[static_cast<size_t>(f.loop)];
              const int64_t whole = extent(loop.extent);
              const int64_t length = sliceLength(f.loop);
              Iteration& at = iterations_[static_cast<size_t>(f.loop)];
              for (int64_t i = 0; i < loop.slicing.slices(whole); ++i) {
                at = {i, i * length, std::min(length, whole - i * length)};
                for (const host::Instruction& inner : f.body) execute(inner);
              }
            },
        },
        instruction);
  }

  const host::HostProgram& program_;
  const std::vector<FusionArgument>& arguments_;
  ExpressionEvaluator& extents_;
  Launch launch_;
  Communicate communicate_;
  ProgramPlacement placement_;
  std::vector<const host::Allocate*> allocations_;  // per buffer, once allocated
  std::vector<std::optional<HostTensor>> tensors_;
  std::vector<const host::Allocate*> pending_;
  std::vector<Iteration> iterations_;  // per loop: the iteration running now
};

}  // namespace braze::runtime_detail
