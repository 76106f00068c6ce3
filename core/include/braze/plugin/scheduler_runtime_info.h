#pragma once

#include <cstdint>
#include <vector>

#include "braze/driver/device_properties.h"
#include "braze/eval/argument_binding.h"

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

}  // namespace braze
