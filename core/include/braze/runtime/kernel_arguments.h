#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include "braze/ir/data_type.h"
#include "braze/ir/scalar_value.h"

namespace braze {

/// The parameters of one kernel launch, each laid out as the generated kernel declares it and
/// pointed to by the array cuLaunchKernelEx takes (kernelParams). Knows nothing of fusions.
///
/// Layouts (IndexT is int32 or int64, the kernel's index type):
///  - a tensor is `braze::Tensor<T, N, IndexT>` (core/src/codegen/runtime/tensor.cuh): the data
///    pointer, then N sizes, then N strides in elements (one of each when N = 0), padded to
///    8 bytes, the struct's alignment;
///  - a scalar is its dtype's value (bool 1 byte, float16/bfloat16 as their 2-byte bits);
///    an Index scalar is an IndexT;
///  - a pointer (workspace) is 8 bytes;
///  - a tensor map (braze::TensorMap, core/src/codegen/runtime/bulk_copy.cuh) is the 128
///    bytes of a CUtensorMap, taken by the kernel as a `const __grid_constant__` parameter.
class KernelArguments {
 public:
  /// `index_type` is DataType::Int32 or DataType::Int64.
  explicit KernelArguments(DataType index_type);

  /// Appends a tensor. Every size, stride and the offset of its last element must fit IndexT;
  /// otherwise the Error names `what` and says to generate the kernel with int64 indexing.
  void addTensor(CUdeviceptr data, std::span<const int64_t> sizes, std::span<const int64_t> strides,
                 std::string_view what);
  /// Appends a scalar of `dtype`, converted (and, for narrow floats, rounded) to it. An integer
  /// that does not fit `dtype` (or IndexT) is an Error naming `what`.
  void addScalar(DataType dtype, const ScalarValue& value, std::string_view what);
  /// Appends a plain device pointer.
  void addPointer(CUdeviceptr pointer);
  /// Appends a tensor map (braze/driver/tensor_map.h), copied: the kernel reads it from the
  /// parameter space, so it needs no device allocation.
  void addTensorMap(const CUtensorMap& map);

  size_t size() const { return offsets_.size(); }
  DataType indexType() const { return index_type_; }
  /// The bytes of parameter `i`.
  std::span<const std::byte> bytes(size_t i) const;
  /// Where parameter `i` starts in storage().
  size_t offset(size_t i) const { return offsets_.at(i); }
  /// Every parameter's bytes, laid out as pointers() points into them: a template a caller may
  /// copy and patch (data pointers) instead of packing again.
  std::span<const std::byte> storage() const { return storage_; }
  /// The kernelParams array for cuLaunchKernelEx; valid until the next append.
  void** pointers();

 private:
  std::byte* append(size_t bytes, size_t alignment);

  // Storage aligned as the most aligned parameter (a tensor map, 128 bytes), so that each
  // parameter is also aligned in host memory, where the driver reads it.
  template <typename T>
  struct AlignedAllocator {
    using value_type = T;
    static constexpr std::align_val_t kAlignment{alignof(CUtensorMap)};
    AlignedAllocator() = default;
    template <typename U>
    AlignedAllocator(const AlignedAllocator<U>&) {}
    T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
    void deallocate(T* p, size_t) { ::operator delete(p, kAlignment); }
    template <typename U>
    bool operator==(const AlignedAllocator<U>&) const {
      return true;
    }
  };

  DataType index_type_;
  std::vector<std::byte, AlignedAllocator<std::byte>> storage_;
  std::vector<size_t> offsets_;
  std::vector<size_t> sizes_;
  std::vector<void*> pointers_;
};

}  // namespace braze
