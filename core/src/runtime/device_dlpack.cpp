#include "braze/runtime/device_dlpack.h"

#include <memory>
#include <vector>

#include "braze/error.h"
#include "braze/eval/dlpack_interop.h"

namespace braze {

namespace {

std::string describeDevice(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda:" + std::to_string(device.device_id);
    case kDLCUDAHost:
      return "cuda_host (pinned host memory)";
    case kDLCUDAManaged:
      return "cuda_managed:" + std::to_string(device.device_id);
    default:
      return "device type " + std::to_string(static_cast<int>(device.device_type));
  }
}

// What an exported DLManagedTensor owns: its shape and strides arrays, and a reference to the
// tensor's memory.
struct ExportContext {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::shared_ptr<void> owner;
};

void deleteExport(DLManagedTensor* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) {
    strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

}  // namespace

DeviceTensor deviceTensorFromDLPack(DLManagedTensor* managed) {
  BRAZE_USER_CHECK(managed != nullptr) << "deviceTensorFromDLPack: the DLManagedTensor is null";
  // Owned from here on, so that every refusal below still releases it, exactly once.
  std::shared_ptr<void> owner(managed, [](void* p) {
    auto* tensor = static_cast<DLManagedTensor*>(p);
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
  });
  const DLTensor& dl = managed->dl_tensor;
  BRAZE_USER_CHECK(dl.device.device_type == kDLCUDA)
      << "deviceTensorFromDLPack: the tensor lives on " << describeDevice(dl.device)
      << "; kernels read CUDA device memory (kDLCUDA) only; move it to a CUDA device first, or "
         "use fromDLPack for host tensors";
  const std::optional<DataType> dtype = fromDLDataType(dl.dtype);
  BRAZE_USER_CHECK(dtype.has_value())
      << "deviceTensorFromDLPack: dtype (code " << static_cast<int>(dl.dtype.code) << ", "
      << static_cast<int>(dl.dtype.bits) << " bits, " << dl.dtype.lanes
      << " lanes) is not supported; Braze reads bool, int32, int64, float16, bfloat16, float32 "
         "and float64 with one lane";
  BRAZE_USER_CHECK(dl.ndim >= 0) << "deviceTensorFromDLPack: ndim " << dl.ndim << " is negative";
  BRAZE_USER_CHECK(dl.ndim == 0 || dl.shape != nullptr)
      << "deviceTensorFromDLPack: the shape of a " << dl.ndim << "-d tensor is null";
  const auto rank = static_cast<size_t>(dl.ndim);
  std::vector<int64_t> sizes(dl.shape, dl.shape + rank);
  // DLPack allows null strides for a compact row-major tensor.
  std::vector<int64_t> strides = dl.strides != nullptr
                                     ? std::vector<int64_t>(dl.strides, dl.strides + rank)
                                     : contiguousStrides(sizes);
  const CUdeviceptr data =
      dl.data == nullptr ? 0 : reinterpret_cast<CUdeviceptr>(dl.data) + dl.byte_offset;
  // borrow() refuses negative sizes and strides with its own message.
  return DeviceTensor::borrow(*dtype, std::move(sizes), std::move(strides), data,
                              dl.device.device_id, std::move(owner));
}

DLManagedTensor* toDLPack(const DeviceTensor& tensor) {
  BRAZE_USER_CHECK(tensor.defined())
      << "toDLPack: the tensor " << tensor.describe() << " has no storage";
  auto context = std::make_unique<ExportContext>();
  context->shape = tensor.sizes();
  context->strides = tensor.strides();
  context->owner = tensor.owner();
  DLManagedTensor& managed = context->managed;
  managed.dl_tensor.data = reinterpret_cast<void*>(tensor.data());
  managed.dl_tensor.device = {kDLCUDA, tensor.device()};
  managed.dl_tensor.ndim = static_cast<int>(tensor.rank());
  managed.dl_tensor.dtype = toDLDataType(tensor.dtype());
  managed.dl_tensor.shape = context->shape.data();
  managed.dl_tensor.strides = context->strides.data();
  managed.dl_tensor.byte_offset = 0;
  managed.manager_ctx = context.get();
  managed.deleter = &deleteExport;
  return &context.release()->managed;
}

}  // namespace braze
