#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "braze/ir/data_type.h"
#include "braze/ir/fusion.h"
#include "braze/segment/segmented_fusion.h"

namespace braze::host {

/// Where a value of a host program lives while it runs: a fusion input, a buffer the program
/// allocates, or an extent it evaluates from the inputs' sizes.
enum class SlotKind : uint8_t { Input, Buffer, Extent };

struct ValueRef {
  SlotKind kind = SlotKind::Input;
  int32_t index = 0;
  bool operator==(const ValueRef&) const = default;
};

/// Allocates `buffer` from the stream-ordered pool: a contiguous tensor of `dtype` whose sizes
/// are the original fusion's `extents` (Index scalars, evaluated from the inputs' sizes).
struct Allocate {
  int32_t buffer = 0;
  DataType dtype = DataType::Float32;
  std::vector<const Val*> extents;
  const TensorView* tensor = nullptr;  ///< the original fusion's tensor it holds
  /// >= 0: the buffer is this fusion input's memory (an output written in place,
  /// Fusion::aliasOutputToInput): nothing is allocated, and the input is what the run returns.
  int32_t alias_input = -1;
};

/// Returns `buffer` to the pool in stream order: every launch enqueued before still sees it.
struct Deallocate {
  int32_t buffer = 0;
};

/// Launches the kernel of segment `segment`: `inputs` in the order of the segment fusion's
/// inputs, `outputs` (buffers) in the order of its outputs.
struct LaunchKernel {
  int32_t segment = 0;
  std::vector<ValueRef> inputs;
  std::vector<int32_t> outputs;
};

using Instruction = std::variant<Allocate, Deallocate, LaunchKernel>;

/// The plan of a FusionKernelRuntime as a small program that one evaluator runs: allocations,
/// one launch per segment in order, and deallocations once a buffer's last reader has been
/// enqueued (so the pool hands its memory to later allocations of the same run). A one-kernel
/// fusion is Allocate(outputs) + one LaunchKernel.
struct HostProgram {
  const Fusion* original = nullptr;  ///< the fusion whose values the program names
  std::vector<Instruction> instructions;
  int32_t num_buffers = 0;
  /// Extents the program evaluates (slot Extent i is extents[i]): buffer sizes and the Index
  /// scalars segments take as inputs.
  std::vector<const Val*> extents;
  /// Where each output of the original fusion is found when the program ends.
  std::vector<ValueRef> outputs;

  /// BRAZE_DUMP=host_ir: one instruction per line, with the original fusion's names.
  std::string toString() const;
};

/// The program that runs `segmented`'s segments in an order that respects their data flow and
/// puts a segment that writes into an input (an aliased output) after every other segment that
/// reads that input: each intermediate is allocated before the segment that writes it and
/// freed after its last reader; the original fusion's outputs are allocated and never freed
/// (they are returned), except aliased ones, which are their input's memory. An output that is
/// an input of the original is returned as the input.
HostProgram buildHostProgram(const SegmentedFusion& segmented);

}  // namespace braze::host
