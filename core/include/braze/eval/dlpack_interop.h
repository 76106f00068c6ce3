#pragma once

#include <dlpack/dlpack.h>

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

}  // namespace braze
