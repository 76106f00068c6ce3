#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braze/eval/argument_binding.h"
#include "braze/eval/host_tensor.h"
#include "braze/ir/data_type.h"

namespace braze {

/// A strided tensor in device memory: dtype, sizes, strides (in elements, never negative; 0
/// for broadcast or expanded dims), the device pointer of its first element, the device
/// ordinal, and an owner that keeps the memory alive for as long as any view of it exists
/// (Braze's own allocation, or a foreign framework's tensor imported through DLPack).
///
/// Making a DeviceTensor from a pointer (borrow) needs no GPU; allocating and copying do.
class DeviceTensor {
 public:
  DeviceTensor() = default;

  /// A new contiguous (row-major) tensor on `device`, allocated with cuMemAlloc in the
  /// device's primary context; contents uninitialized.
  static DeviceTensor empty(DataType dtype, std::vector<int64_t> sizes, int device = 0);
  /// As above, dense in `allocation_order` (dims outermost first; empty: row-major).
  static DeviceTensor empty(DataType dtype, std::vector<int64_t> sizes,
                            const std::vector<int64_t>& allocation_order, int device);
  /// As above, in stream-ordered memory of `stream` (DeviceMemory::allocateOnStream): usable by
  /// work enqueued there from now on and freed in its order, never waiting for the device.
  static DeviceTensor emptyOnStream(DataType dtype, std::vector<int64_t> sizes,
                                    const std::vector<int64_t>& allocation_order, int device,
                                    CUstream stream);
  /// A view of existing device memory at `data`. `owner` is kept alive as long as any view
  /// exists (may be null when the caller guarantees the memory's lifetime).
  static DeviceTensor borrow(DataType dtype, std::vector<int64_t> sizes,
                             std::vector<int64_t> strides, CUdeviceptr data, int device,
                             std::shared_ptr<void> owner);
  /// A copy of `host` on `device` with the same sizes and strides: the span of memory the
  /// host tensor's elements occupy is copied as is, so non-contiguous and gapped layouts stay
  /// what they were. The copy has landed when this returns: work on any stream may read it.
  static DeviceTensor fromHost(const HostTensor& host, int device = 0);

  /// A host copy with the same sizes and strides (synchronous: waits for the device).
  HostTensor toHost() const;

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t rank() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const;
  bool defined() const { return data_ != 0 || numel() == 0; }
  bool isContiguous() const;

  CUdeviceptr data() const { return data_; }
  int device() const { return device_; }
  const std::shared_ptr<void>& owner() const { return owner_; }

  /// Bytes from data() to the end of the last element: the span the elements occupy.
  int64_t storageBytes() const;
  /// Sets every byte of the storage span to `value` on `stream` (asynchronous). Tests poison
  /// outputs with 0xFF (NaN for floats, -1 for integers) to catch elements never written.
  void fillBytes(uint8_t value, CUstream stream = nullptr) const;

  /// "float32[2, 3] strides [3, 1] on cuda:0": for error messages.
  std::string describe() const;
  /// The metadata argument validation reads (braze/eval/argument_binding.h).
  TensorArgumentInfo argumentInfo() const;

 private:
  DataType dtype_ = DataType::Float32;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  CUdeviceptr data_ = 0;
  int device_ = 0;
  std::shared_ptr<void> owner_;
};

}  // namespace braze
