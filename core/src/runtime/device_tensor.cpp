#include "braze/runtime/device_tensor.h"
#include "braze/eval/strided_layout.h"

#include <cstring>
#include <numeric>
#include <sstream>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"

namespace braze {

namespace {

void checkShape(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                std::string_view what) {
  BRAZE_USER_CHECK(sizes.size() == strides.size())
      << what << ": sizes " << formatSizes(sizes) << " and strides " << formatSizes(strides)
      << " differ in length";
  int64_t numel = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    BRAZE_USER_CHECK(sizes[d] >= 0) << what << ": size " << sizes[d] << " of dim " << d << " in "
                                    << formatSizes(sizes) << " is negative";
    BRAZE_USER_CHECK(strides[d] >= 0)
        << what << ": stride " << strides[d] << " of dim " << d << " in " << formatSizes(strides)
        << " is negative; Braze reads device tensors with non-negative strides only";
    BRAZE_USER_CHECK(sizes[d] == 0 || numel <= INT64_MAX / sizes[d])
        << what << ": the element count of " << formatSizes(sizes) << " overflows int64";
    numel *= sizes[d];
  }
}

// Elements from the first to one past the last reachable one (0 for an empty tensor).
int64_t spanElements(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t last = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return last + 1;
}

}  // namespace

DeviceTensor DeviceTensor::empty(DataType dtype, std::vector<int64_t> sizes, int device) {
  return empty(dtype, std::move(sizes), {}, device);
}

DeviceTensor DeviceTensor::empty(DataType dtype, std::vector<int64_t> sizes,
                                 const std::vector<int64_t>& allocation_order, int device) {
  BRAZE_USER_CHECK(allocation_order.empty() || allocation_order.size() == sizes.size())
      << "DeviceTensor::empty: allocation order " << formatSizes(allocation_order) << " for sizes "
      << formatSizes(sizes) << "; give one entry per dim";
  std::vector<int64_t> strides = denseStrides(sizes, allocation_order);
  checkShape(sizes, strides, "DeviceTensor::empty");
  const int64_t bytes = spanElements(sizes, strides) * sizeInBytes(dtype);
  std::shared_ptr<driver::DeviceMemory> memory =
      driver::DeviceMemory::allocate(device, static_cast<size_t>(bytes));
  const CUdeviceptr data = memory->pointer();
  return borrow(dtype, std::move(sizes), std::move(strides), data, device, std::move(memory));
}

DeviceTensor DeviceTensor::emptyOnStream(DataType dtype, std::vector<int64_t> sizes,
                                         const std::vector<int64_t>& allocation_order, int device,
                                         CUstream stream) {
  std::vector<int64_t> strides = denseStrides(sizes, allocation_order);
  checkShape(sizes, strides, "DeviceTensor::emptyOnStream");
  const int64_t bytes = spanElements(sizes, strides) * sizeInBytes(dtype);
  std::shared_ptr<driver::DeviceMemory> memory =
      driver::DeviceMemory::allocateOnStream(device, static_cast<size_t>(bytes), stream);
  const CUdeviceptr data = memory->pointer();
  return borrow(dtype, std::move(sizes), std::move(strides), data, device, std::move(memory));
}

DeviceTensor DeviceTensor::borrow(DataType dtype, std::vector<int64_t> sizes,
                                  std::vector<int64_t> strides, CUdeviceptr data, int device,
                                  std::shared_ptr<void> owner) {
  checkShape(sizes, strides, "DeviceTensor::borrow");
  BRAZE_USER_CHECK(device >= 0) << "DeviceTensor::borrow: device ordinal " << device
                                << " is negative";
  DeviceTensor tensor;
  tensor.dtype_ = dtype;
  tensor.sizes_ = std::move(sizes);
  tensor.strides_ = std::move(strides);
  tensor.data_ = data;
  tensor.device_ = device;
  tensor.owner_ = std::move(owner);
  return tensor;
}

DeviceTensor DeviceTensor::fromHost(const HostTensor& host, int device) {
  BRAZE_USER_CHECK(host.defined())
      << "DeviceTensor::fromHost: the host tensor " << host.describe() << " has no storage";
  checkShape(host.sizes(), host.strides(), "DeviceTensor::fromHost");
  const int64_t bytes = spanElements(host.sizes(), host.strides()) * sizeInBytes(host.dtype());
  std::shared_ptr<driver::DeviceMemory> memory =
      driver::DeviceMemory::allocate(device, static_cast<size_t>(bytes));
  if (bytes > 0) {
    BRAZE_CU(memcpyHtoD, memory->pointer(), host.data(), static_cast<size_t>(bytes));
    // From pageable memory cuMemcpyHtoD returns once the bytes are staged, with the DMA still
    // queued on the legacy stream, which non-blocking streams do not wait for: without this a
    // kernel or copy on such a stream could read the allocation before the bytes land.
    BRAZE_CU(streamSynchronize, CU_STREAM_LEGACY);
  }
  const CUdeviceptr data = memory->pointer();
  return borrow(host.dtype(), host.sizes(), host.strides(), data, device, std::move(memory));
}

HostTensor DeviceTensor::toHost() const {
  BRAZE_USER_CHECK(defined()) << "DeviceTensor::toHost: the tensor " << describe()
                              << " has no storage";
  const int64_t bytes = storageBytes();
  HostTensor buffer =
      HostTensor::empty(dtype_, {std::max<int64_t>(spanElements(sizes_, strides_), 1)});
  if (bytes > 0) {
    driver::makePrimaryContextCurrent(device_);
    // cuMemcpyDtoH waits for prior work in the legacy default stream only; wait for all of it.
    BRAZE_CU(ctxSynchronize);
    BRAZE_CU(memcpyDtoH, buffer.data(), data_, static_cast<size_t>(bytes));
  }
  return HostTensor::borrow(dtype_, sizes_, strides_, buffer.data(), buffer.owner());
}

int64_t DeviceTensor::numel() const {
  return numelOf(sizes_);
}

bool DeviceTensor::isContiguous() const {
  return isContiguousLayout(sizes_, strides_);
}

int64_t DeviceTensor::storageBytes() const {
  return spanElements(sizes_, strides_) * sizeInBytes(dtype_);
}

void DeviceTensor::fillBytes(uint8_t value, CUstream stream) const {
  const int64_t bytes = storageBytes();
  if (bytes == 0) return;
  BRAZE_USER_CHECK(data_ != 0) << "DeviceTensor::fillBytes: the tensor " << describe()
                               << " has no storage";
  driver::makePrimaryContextCurrent(device_);
  BRAZE_CU(memsetD8Async, data_, value, static_cast<size_t>(bytes), stream);
}

std::string DeviceTensor::describe() const {
  std::ostringstream os;
  os << dtype_ << formatSizes(sizes_) << " strides " << formatSizes(strides_)
     << " on cuda:" << device_;
  return os.str();
}

TensorArgumentInfo DeviceTensor::argumentInfo() const {
  return {.dtype = dtype_,
          .sizes = sizes_,
          .strides = strides_,
          .has_storage = defined(),
          .description = describe()};
}

}  // namespace braze
