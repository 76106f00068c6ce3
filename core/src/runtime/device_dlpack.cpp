#include "braze/runtime/device_dlpack.h"

#include <memory>
#include <vector>

#include "braze/error.h"
#include "braze/eval/dlpack_interop.h"

namespace braze {

DeviceTensor deviceTensorFromDLPack(DLManagedTensor* managed) {
  ImportedDLPack imported =
      importDLPack(managed, "deviceTensorFromDLPack", {kDLCUDA},
                   "kernels read CUDA device memory (kDLCUDA) only; move it to a CUDA device "
                   "first, or use fromDLPack for host tensors");
  // borrow() refuses negative strides with its own message.
  return DeviceTensor::borrow(imported.dtype, std::move(imported.sizes),
                              std::move(imported.strides),
                              reinterpret_cast<CUdeviceptr>(imported.data),
                              imported.device.device_id, std::move(imported.owner));
}

DLManagedTensor* toDLPack(const DeviceTensor& tensor) {
  BRAZE_USER_CHECK(tensor.defined())
      << "toDLPack: the tensor " << tensor.describe() << " has no storage";
  return exportDLPack(reinterpret_cast<void*>(tensor.data()), {kDLCUDA, tensor.device()},
                      tensor.dtype(), tensor.sizes(), tensor.strides(), tensor.owner());
}

}  // namespace braze
