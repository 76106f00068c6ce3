#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braze/ir/data_type.h"
#include "braze/ir/scalar_value.h"

namespace braze {

/// A strided tensor in host memory: dtype, sizes, strides (in elements, may be 0 for broadcast
/// or expanded dims), a byte offset, and storage whose lifetime is shared by every view of it.
/// Storage is either allocated by Braze or borrowed from another framework (DLPack), in which
/// case `owner` keeps the foreign buffer alive.
class HostTensor {
 public:
  HostTensor() = default;

  /// A new contiguous (row-major) tensor; contents uninitialized.
  static HostTensor empty(DataType dtype, std::vector<int64_t> sizes);
  /// A new dense tensor laid out in `allocation_order` (dims outermost first; empty:
  /// row-major); contents uninitialized.
  static HostTensor empty(DataType dtype, std::vector<int64_t> sizes,
                          const std::vector<int64_t>& allocation_order);
  /// A new contiguous tensor with every element equal to `value` (converted to dtype).
  static HostTensor full(DataType dtype, std::vector<int64_t> sizes, ScalarValue value);
  /// A view of existing memory. `owner` is kept alive as long as any view exists.
  static HostTensor borrow(DataType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                           void* data, std::shared_ptr<void> owner);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t rank() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t size(int64_t dim) const;
  int64_t numel() const;
  bool defined() const { return data_ != nullptr || numel() == 0; }
  bool isContiguous() const;

  void* data() const { return data_; }
  const std::shared_ptr<void>& owner() const { return owner_; }

  /// Element access by multi-index (size == rank), converting to/from the held category.
  ScalarValue at(const std::vector<int64_t>& index) const;
  void set(const std::vector<int64_t>& index, ScalarValue value);
  /// Element access by flat row-major position.
  ScalarValue atFlat(int64_t position) const;
  void setFlat(int64_t position, ScalarValue value);

  /// A view with permuted dims (no copy), as torch.permute: a convenient way to build
  /// non-contiguous inputs.
  HostTensor permuted(const std::vector<int64_t>& dims) const;
  /// A view of every `step`-th element along `dim`, starting at `start`.
  HostTensor strided(int64_t dim, int64_t start, int64_t step) const;
  /// A view of elements [start, start + length) along `dim`.
  HostTensor narrowed(int64_t dim, int64_t start, int64_t length) const;
  /// A view with the given size-1 dims expanded to `sizes` by stride 0.
  HostTensor expanded(const std::vector<int64_t>& sizes) const;
  /// A contiguous copy.
  HostTensor contiguous() const;

  /// "float32[2, 3] strides [3, 1]": for error messages.
  std::string describe() const;

 private:
  DataType dtype_ = DataType::Float32;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

/// Reads element `offset_elements` of a buffer of `dtype` as a held value (float16 and
/// bfloat16 widened exactly to double).
ScalarValue loadElement(DataType dtype, const void* base, int64_t offset_elements);
/// Stores a held value into a buffer of `dtype`, rounding to its precision.
void storeElement(DataType dtype, void* base, int64_t offset_elements, const ScalarValue& value);

}  // namespace braze
