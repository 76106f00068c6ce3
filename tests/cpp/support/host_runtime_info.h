#pragma once

// The runtime info schedulers see for a run with host tensors, for scheduler tests whose cases
// make real (possibly strided) arguments. Tests that have only sizes use contiguousRuntimeInfo.

#include <cstdint>
#include <vector>

#include "braze/driver/device_properties.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/plugin/scheduler_runtime_info.h"

namespace braze::test {

/// One argument per entry of `arguments`: a tensor's metadata (argumentInfoOf, its dtype,
/// sizes and strides) with `data_alignment` bytes of alignment, or a scalar's value; `device`
/// as the device.
SchedulerRuntimeInfo hostRuntimeInfo(
    const std::vector<EvaluatorArgument>& arguments, int64_t data_alignment = 16,
    const driver::DeviceProperties& device = driver::h100Properties());

}  // namespace braze::test
