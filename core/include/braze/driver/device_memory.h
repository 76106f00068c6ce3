#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>

namespace braze::driver {

/// One block of device memory in the primary context of its device, freed when the last
/// reference to it is gone. Zero bytes allocate nothing (the pointer is 0).
class DeviceMemory {
 public:
  /// Memory usable by any stream once this returns; freeing it waits for the device.
  static std::shared_ptr<DeviceMemory> allocate(int device, size_t bytes);
  /// Stream-ordered memory: usable by work enqueued on `stream` from now on, and freed in
  /// `stream`'s order, so the work enqueued before the last reference goes still sees it.
  /// `stream` must outlive the allocation. Where the device has no memory pools, falls back to
  /// allocate() and synchronizes `stream` before freeing. Blocks of the default stream (null)
  /// are kept after their last reference for the next allocation of the same rounded size on
  /// it, without a driver call either way.
  static std::shared_ptr<DeviceMemory> allocateOnStream(int device, size_t bytes, CUstream stream);

  /// Memory someone else owns (`owner` keeps it alive), seen as a block: freed by its owner,
  /// never by this. Lets a run write an output where the caller wants it.
  static std::shared_ptr<DeviceMemory> borrow(int device, CUdeviceptr pointer, size_t bytes,
                                              std::shared_ptr<void> owner);

  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  CUdeviceptr pointer() const { return pointer_; }
  size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  DeviceMemory(int device, size_t bytes) : device_(device), bytes_(bytes) {}

  int device_;
  size_t bytes_;
  CUdeviceptr pointer_ = 0;
  bool stream_ordered_ = false;
  bool synchronize_before_free_ = false;
  CUstream stream_ = nullptr;
  /// Nonzero for a block of the default stream: its rounded size, under which it is kept for
  /// reuse when the last reference goes (see device_memory.cpp).
  size_t kept_bytes_ = 0;
  std::shared_ptr<void> owner_;  ///< set for borrowed memory, which this never frees
};

}  // namespace braze::driver
