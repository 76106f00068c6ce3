#include "braze/eval/dlpack_interop.h"

#include <sstream>

#include "braze/error.h"
#include "eval/strided_walk.h"

namespace braze {

namespace {

// DLPack 0.8 added a bool type code; the 0.6 header Braze builds against predates it, but
// producers such as PyTorch and NumPy use it, so it is spelled out here.
constexpr uint8_t kDLBoolCode = 6;
// DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2 (8 bits, one lane), as PyTorch exports
// torch.float8_e4m3fn and torch.float8_e5m2; likewise absent from the 0.6 header.
constexpr uint8_t kDLFloat8E4M3fnCode = 10;
constexpr uint8_t kDLFloat8E5M2Code = 12;

std::string describeDLDataType(DLDataType dtype) {
  std::ostringstream os;
  switch (dtype.code) {
    case kDLInt:
      os << "int";
      break;
    case kDLUInt:
      os << "uint";
      break;
    case kDLFloat:
      os << "float";
      break;
    case kDLBfloat:
      os << "bfloat";
      break;
    case kDLComplex:
      os << "complex";
      break;
    case kDLOpaqueHandle:
      os << "opaque handle ";
      break;
    case kDLBoolCode:
      os << "bool";
      break;
    case kDLFloat8E4M3fnCode:
      os << "float8_e4m3fn (bits ";
      break;
    case kDLFloat8E5M2Code:
      os << "float8_e5m2 (bits ";
      break;
    default:
      os << "type code " << static_cast<int>(dtype.code) << " of ";
      break;
  }
  os << static_cast<int>(dtype.bits);
  if (dtype.code == kDLFloat8E4M3fnCode || dtype.code == kDLFloat8E5M2Code) os << ")";
  if (dtype.lanes != 1) os << "x" << dtype.lanes;
  return os.str();
}

// What an exported DLManagedTensor owns: the shape and strides arrays it points to, and a
// reference to the tensor's storage.
struct ExportContext {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::shared_ptr<void> owner;
};

void deleteExport(DLManagedTensor* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
}

}  // namespace

DLDataType toDLDataType(DataType dtype) {
  const auto bits = static_cast<uint8_t>(sizeInBytes(dtype) * 8);
  switch (dtype) {
    case DataType::Bool:
      return {kDLBoolCode, 8, 1};
    case DataType::Int32:
    case DataType::Int64:
    case DataType::Index:
      return {kDLInt, bits, 1};
    case DataType::BFloat16:
      return {kDLBfloat, 16, 1};
    case DataType::Float16:
    case DataType::Float32:
    case DataType::Float64:
      return {kDLFloat, bits, 1};
    case DataType::Float8_e4m3fn:
      return {kDLFloat8E4M3fnCode, 8, 1};
    case DataType::Float8_e5m2:
      return {kDLFloat8E5M2Code, 8, 1};
  }
  BRAZE_INTERNAL_CHECK(false) << "toDLDataType: unknown dtype " << static_cast<int>(dtype);
}

std::optional<DataType> fromDLDataType(DLDataType dtype) {
  if (dtype.lanes != 1) return std::nullopt;
  switch (dtype.code) {
    case kDLBoolCode:
      if (dtype.bits == 8) return DataType::Bool;
      break;
    case kDLInt:
      if (dtype.bits == 32) return DataType::Int32;
      if (dtype.bits == 64) return DataType::Int64;
      break;
    case kDLFloat:
      if (dtype.bits == 16) return DataType::Float16;
      if (dtype.bits == 32) return DataType::Float32;
      if (dtype.bits == 64) return DataType::Float64;
      break;
    case kDLBfloat:
      if (dtype.bits == 16) return DataType::BFloat16;
      break;
    case kDLFloat8E4M3fnCode:
      if (dtype.bits == 8) return DataType::Float8_e4m3fn;
      break;
    case kDLFloat8E5M2Code:
      if (dtype.bits == 8) return DataType::Float8_e5m2;
      break;
    default:
      break;
  }
  return std::nullopt;
}

std::string describeDLDevice(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda:" + std::to_string(device.device_id);
    case kDLCUDAHost:
      return "cuda_host (pinned host memory)";
    case kDLCUDAManaged:
      return "cuda_managed:" + std::to_string(device.device_id);
    case kDLROCM:
      return "rocm:" + std::to_string(device.device_id);
    default:
      return "device type " + std::to_string(static_cast<int>(device.device_type));
  }
}

ImportedDLPack importDLPack(DLManagedTensor* managed, std::string_view caller,
                            std::initializer_list<DLDeviceType> accepted_devices,
                            std::string_view what_to_do) {
  BRAZE_USER_CHECK(managed != nullptr) << caller << ": the DLManagedTensor is null";
  // Take ownership first, so that every refusal below still releases the producer's tensor,
  // exactly once.
  std::shared_ptr<void> owner(managed, [](void* p) {
    auto* tensor = static_cast<DLManagedTensor*>(p);
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
  });
  const DLTensor& dl = managed->dl_tensor;
  bool accepted = false;
  for (DLDeviceType type : accepted_devices) accepted = accepted || dl.device.device_type == type;
  BRAZE_USER_CHECK(accepted) << caller << ": the tensor lives on " << describeDLDevice(dl.device)
                             << "; " << what_to_do;
  const std::optional<DataType> dtype = fromDLDataType(dl.dtype);
  BRAZE_USER_CHECK(dtype.has_value())
      << caller << ": dtype " << describeDLDataType(dl.dtype)
      << " is not supported; Braze reads bool, int32, int64, float16, bfloat16, float32 and "
         "float64 with one lane";
  BRAZE_USER_CHECK(dl.ndim >= 0) << caller << ": ndim " << dl.ndim << " is negative";
  BRAZE_USER_CHECK(dl.ndim == 0 || dl.shape != nullptr)
      << caller << ": the shape of a " << dl.ndim << "-d tensor is null";

  const auto rank = static_cast<size_t>(dl.ndim);
  std::vector<int64_t> sizes(dl.shape, dl.shape + rank);
  for (size_t d = 0; d < rank; ++d) {
    BRAZE_USER_CHECK(sizes[d] >= 0) << caller << ": dim " << d << " has negative size " << sizes[d];
  }
  // DLPack allows null strides for a compact row-major tensor.
  std::vector<int64_t> strides = dl.strides != nullptr
                                     ? std::vector<int64_t>(dl.strides, dl.strides + rank)
                                     : eval_detail::contiguousStrides(sizes);
  void* data = dl.data == nullptr ? nullptr : static_cast<char*>(dl.data) + dl.byte_offset;
  return {*dtype, std::move(sizes), std::move(strides), data, dl.device, std::move(owner)};
}

DLManagedTensor* exportDLPack(void* data, DLDevice device, DataType dtype,
                              const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, std::shared_ptr<void> owner) {
  auto context = std::make_unique<ExportContext>();
  context->shape = sizes;
  context->strides = strides;
  context->owner = std::move(owner);
  DLManagedTensor& managed = context->managed;
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = device;
  managed.dl_tensor.ndim = static_cast<int>(sizes.size());
  managed.dl_tensor.dtype = toDLDataType(dtype);
  managed.dl_tensor.shape = context->shape.data();
  managed.dl_tensor.strides = context->strides.data();
  managed.dl_tensor.byte_offset = 0;
  managed.manager_ctx = context.get();
  managed.deleter = &deleteExport;
  return &context.release()->managed;
}

HostTensor fromDLPack(DLManagedTensor* managed) {
  ImportedDLPack imported =
      importDLPack(managed, "fromDLPack", {kDLCPU, kDLCUDAHost},
                   "the host evaluator reads only CPU (or CUDA pinned host) memory; copy it to "
                   "the CPU first");
  return HostTensor::borrow(imported.dtype, std::move(imported.sizes), std::move(imported.strides),
                            imported.data, std::move(imported.owner));
}

DLManagedTensor* toDLPack(const HostTensor& tensor) {
  BRAZE_USER_CHECK(tensor.defined()) << "toDLPack: the tensor has no storage";
  return exportDLPack(tensor.data(), {kDLCPU, 0}, tensor.dtype(), tensor.sizes(), tensor.strides(),
                      tensor.owner());
}

}  // namespace braze
