#pragma once

#include "braze/driver/device_properties.h"

namespace braze {

/// The device properties heuristics should assume: those of device `ordinal` when a CUDA
/// driver and that device are present, H100's (driver::h100Properties) otherwise, so that
/// scheduling decisions can be made, printed and tested on a machine without a GPU. Schedulers
/// take the result as a parameter rather than calling this inside heuristics, so a test can
/// pass any device.
driver::DeviceProperties schedulingDeviceProperties(int ordinal = 0);

/// True when schedulingDeviceProperties(ordinal) describes a real device rather than the
/// H100 stand-in.
bool hasSchedulingDevice(int ordinal = 0);

}  // namespace braze
