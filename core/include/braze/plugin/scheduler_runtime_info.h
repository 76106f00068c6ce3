#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "braze/driver/device_properties.h"
#include "braze/eval/argument_binding.h"
#include "braze/ir/fusion.h"
#include "braze/ir/scalar_value.h"

namespace braze {

/// What a scheduler may know about one run of a fusion beyond its structure: the arguments'
/// metadata (one per fusion input, in order), the byte alignment of each tensor argument's
/// data pointer (0 for scalars), and the device. Plugins receive it as
/// `const SchedulerRuntimeInfo*` through the C table; the build tag guarantees its layout.
struct SchedulerRuntimeInfo {
  std::vector<ArgumentInfo> arguments;
  std::vector<int64_t> data_alignments;
  driver::DeviceProperties device;
};

/// The alignment in bytes that vector accesses to input `input`'s data may rely on: its entry
/// of `info.data_alignments` capped at 16 (the widest vector access), and 1 when the entry is
/// missing or 0 (an unknown alignment allows no vector access).
int64_t vectorAlignment(const SchedulerRuntimeInfo& info, size_t input);

/// The runtime info of a run of `fusion` with dense tensors, for tests and tools that have
/// sizes but no tensors: one argument per fusion input, in order. Tensor inputs take
/// `tensor_sizes` in order (dtype from the fusion, strides dense in the input's allocation
/// order: row-major unless it declares another, data aligned to 16 bytes); scalar inputs take
/// `scalars` in order. Throws a braze::Error when the number of sizes or scalars differs from the
/// fusion's tensor or scalar inputs.
SchedulerRuntimeInfo contiguousRuntimeInfo(
    const Fusion& fusion, const std::vector<std::vector<int64_t>>& tensor_sizes,
    const std::vector<ScalarValue>& scalars = {},
    const driver::DeviceProperties& device = driver::h100Properties());

}  // namespace braze
