#pragma once

#include <cuda.h>

namespace braze::driver {

/// Number of CUDA devices the driver sees; 0 when there is no usable driver.
int deviceCount();

/// Makes the primary context of device `ordinal` current on the calling thread and returns it.
/// The primary context is the one the CUDA runtime (and so PyTorch, CuPy, JAX) uses, so device
/// pointers and streams are shared with them. It is retained on first use and kept for the
/// life of the process. Throws "no CUDA driver or device: ..." without a driver, and an error
/// naming the ordinal and the device count for a device that does not exist.
CUcontext makePrimaryContextCurrent(int ordinal);

}  // namespace braze::driver
