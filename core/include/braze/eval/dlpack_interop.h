#pragma once

#include <dlpack/dlpack.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "braze/eval/host_tensor.h"

namespace braze {

/// Imports a DLPack tensor that lives in CPU memory, without copying. Braze takes ownership of
/// `managed`: its deleter runs when the last HostTensor view is gone. An unsupported dtype,
/// device or lane count is refused with an Error that names what was found (and `managed` is
/// then released).
HostTensor fromDLPack(DLManagedTensor* managed);

/// Exports a HostTensor as DLPack, without copying; the returned tensor keeps the storage alive
/// until its deleter is called by the consumer.
DLManagedTensor* toDLPack(const HostTensor& tensor);

/// DLPack's dtype description of a Braze dtype, and back (nullopt when Braze has no such
/// dtype).
DLDataType toDLDataType(DataType dtype);
std::optional<DataType> fromDLDataType(DLDataType dtype);

/// A DLPack tensor taken over by Braze, whatever its device: the checked dtype and sizes,
/// strides (filled in when DLPack's are null), the data address with byte_offset applied, and
/// an owner whose last copy calls the producer's deleter, exactly once. Host and device
/// imports (fromDLPack, deviceTensorFromDLPack) share it so both check the same things.
struct ImportedDLPack {
  DataType dtype;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  void* data;
  DLDevice device;
  std::shared_ptr<void> owner;
};

/// Takes ownership of `managed` (released even when refused) and checks it: a device type in
/// `accepted_devices` (else an Error "<caller>: the tensor lives on <device>; <what_to_do>"),
/// a supported dtype with one lane, a non-negative ndim, sizes and a shape pointer.
ImportedDLPack importDLPack(DLManagedTensor* managed, std::string_view caller,
                            std::initializer_list<DLDeviceType> accepted_devices,
                            std::string_view what_to_do);

/// A DLManagedTensor viewing `data` without copying; it keeps `owner` alive until the
/// consumer calls its deleter.
DLManagedTensor* exportDLPack(void* data, DLDevice device, DataType dtype,
                              const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, std::shared_ptr<void> owner);

/// "cpu", "cuda:1", "cuda_host (pinned host memory)": how errors name a DLPack device.
std::string describeDLDevice(DLDevice device);

}  // namespace braze
