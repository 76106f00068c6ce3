#pragma once

#include <dlpack/dlpack.h>

#include "braze/runtime/device_tensor.h"

namespace braze {

/// Imports a DLPack tensor in CUDA device memory (kDLCUDA), without copying: PyTorch, CuPy and
/// JAX tensors become kernel inputs as they are. Braze takes ownership of `managed`: its
/// deleter runs when the last DeviceTensor view is gone. Another device type, an unsupported
/// dtype or lane count, or negative strides are refused with an Error that names what was
/// found (and `managed` is released then too). Needs no GPU.
DeviceTensor deviceTensorFromDLPack(DLManagedTensor* managed);

/// Exports a DeviceTensor as DLPack (kDLCUDA, its device), without copying; the returned
/// tensor keeps the memory alive until the consumer calls its deleter.
DLManagedTensor* toDLPack(const DeviceTensor& tensor);

}  // namespace braze
