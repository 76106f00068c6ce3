#include "braze/runtime/kernel_arguments.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "braze/error.h"
#include "braze/eval/host_tensor.h"

namespace braze {

namespace {

// Every parameter starts on a 16-byte boundary of the storage (a tensor map on its own 128),
// and the storage is allocated with the largest of these alignments, so no layout's alignment
// is ever violated.
constexpr size_t kParameterAlignment = 16;

template <typename IndexT>
void writeIndices(std::byte* at, std::span<const int64_t> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    const auto value = static_cast<IndexT>(values[i]);
    std::memcpy(at + i * sizeof(IndexT), &value, sizeof(IndexT));
  }
}

const char* indexTypeName(DataType index_type) {
  return index_type == DataType::Int32 ? "int32" : "int64";
}

}  // namespace

KernelArguments::KernelArguments(DataType index_type) : index_type_(index_type) {
  BRAZE_INTERNAL_CHECK(index_type == DataType::Int32 || index_type == DataType::Int64)
      << "KernelArguments: the index type must be int32 or int64, not " << index_type;
}

std::byte* KernelArguments::append(size_t bytes, size_t alignment) {
  BRAZE_INTERNAL_CHECK(alignment <= alignof(CUtensorMap))
      << "KernelArguments: alignment " << alignment;
  const size_t step = std::max(alignment, kParameterAlignment);
  const size_t offset = (storage_.size() + step - 1) / step * step;
  storage_.resize(offset + bytes);
  offsets_.push_back(offset);
  sizes_.push_back(bytes);
  return storage_.data() + offset;
}

void KernelArguments::addTensor(CUdeviceptr data, std::span<const int64_t> sizes,
                                std::span<const int64_t> strides, std::string_view what) {
  BRAZE_INTERNAL_CHECK(sizes.size() == strides.size())
      << "KernelArguments::addTensor: " << what << " has " << sizes.size() << " sizes and "
      << strides.size() << " strides";
  const int64_t index_max = index_type_ == DataType::Int32 ? std::numeric_limits<int32_t>::max()
                                                           : std::numeric_limits<int64_t>::max();
  int64_t last_offset = 0;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    BRAZE_USER_CHECK(sizes[d] <= index_max && strides[d] <= index_max)
        << what << ": dim " << d << " (size " << sizes[d] << ", stride " << strides[d]
        << ") does not fit the kernel's " << indexTypeName(index_type_)
        << " index type; generate the kernel again with int64 indexing";
    if (sizes[d] == 0) empty = true;
    if (sizes[d] > 0) last_offset += (sizes[d] - 1) * strides[d];
  }
  BRAZE_USER_CHECK(empty || last_offset <= index_max)
      << what << ": the offset of its last element, " << last_offset
      << ", does not fit the kernel's " << indexTypeName(index_type_)
      << " index type; generate the kernel again with int64 indexing";

  // Tensor<T, N, IndexT> { T* data; IndexT size[max(N,1)]; IndexT stride[max(N,1)]; }
  const size_t index_bytes = static_cast<size_t>(sizeInBytes(index_type_));
  const size_t slots = std::max<size_t>(sizes.size(), 1);
  const size_t unpadded = sizeof(uint64_t) + 2 * slots * index_bytes;
  const size_t bytes = (unpadded + 7) / 8 * 8;
  std::byte* at = append(bytes, 8);
  std::memset(at, 0, bytes);
  const uint64_t pointer = data;
  std::memcpy(at, &pointer, sizeof(pointer));
  std::byte* size_at = at + sizeof(uint64_t);
  std::byte* stride_at = size_at + slots * index_bytes;
  if (index_type_ == DataType::Int32) {
    writeIndices<int32_t>(size_at, sizes);
    writeIndices<int32_t>(stride_at, strides);
  } else {
    writeIndices<int64_t>(size_at, sizes);
    writeIndices<int64_t>(stride_at, strides);
  }
}

void KernelArguments::addScalar(DataType dtype, const ScalarValue& value, std::string_view what) {
  const DataType stored = dtype == DataType::Index ? index_type_ : dtype;
  if (stored == DataType::Int32) {
    // Checked before the cast, which would wrap.
    const int64_t v = toInt64(castScalar(value, DataType::Int64));
    BRAZE_USER_CHECK(v >= std::numeric_limits<int32_t>::min() &&
                     v <= std::numeric_limits<int32_t>::max())
        << what << ": the value " << v << " does not fit "
        << (dtype == DataType::Index ? "the kernel's int32 index type; generate the kernel again "
                                       "with int64 indexing"
                                     : "int32");
  }
  const auto bytes = static_cast<size_t>(sizeInBytes(stored));
  std::byte* at = append(bytes, bytes);
  storeElement(stored, at, 0, castScalar(value, stored));
}

void KernelArguments::addPointer(CUdeviceptr pointer) {
  std::byte* at = append(sizeof(uint64_t), sizeof(uint64_t));
  const uint64_t value = pointer;
  std::memcpy(at, &value, sizeof(value));
}

void KernelArguments::addTensorMap(const CUtensorMap& map) {
  std::byte* at = append(sizeof(CUtensorMap), alignof(CUtensorMap));
  std::memcpy(at, &map, sizeof(CUtensorMap));
}

std::span<const std::byte> KernelArguments::bytes(size_t i) const {
  BRAZE_INTERNAL_CHECK(i < offsets_.size())
      << "KernelArguments::bytes: parameter " << i << " of " << offsets_.size();
  return {storage_.data() + offsets_[i], sizes_[i]};
}

void** KernelArguments::pointers() {
  pointers_.resize(offsets_.size());
  for (size_t i = 0; i < offsets_.size(); ++i) pointers_[i] = storage_.data() + offsets_[i];
  return pointers_.data();
}

}  // namespace braze
