#include "braze/sched/device_info.h"

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"

namespace braze {

bool hasSchedulingDevice(int ordinal) {
  return ordinal >= 0 && driver::isDriverAvailable() && ordinal < driver::deviceCount();
}

driver::DeviceProperties schedulingDeviceProperties(int ordinal) {
  if (hasSchedulingDevice(ordinal)) return driver::deviceProperties(ordinal);
  driver::DeviceProperties properties = driver::h100Properties();
  properties.ordinal = ordinal;
  return properties;
}

}  // namespace braze
