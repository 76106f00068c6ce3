#include "braze/eval/host_tensor.h"
#include "braze/eval/strided_layout.h"

#include <cstring>
#include <new>
#include <numeric>
#include <sstream>

#include "braze/error.h"
#include "braze/ops/elementwise_semantics.h"
#include "eval/reduced_precision_bits.h"
#include "eval/strided_walk.h"

namespace braze {

namespace {

constexpr std::align_val_t kAlignment{64};

int64_t checkedNumel(const std::vector<int64_t>& sizes, std::string_view what) {
  int64_t numel = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    BRAZE_USER_CHECK(sizes[d] >= 0) << what << ": size " << sizes[d] << " of dim " << d << " in "
                                    << formatSizes(sizes) << " is negative";
    BRAZE_USER_CHECK(sizes[d] == 0 || numel <= INT64_MAX / sizes[d])
        << what << ": the element count of " << formatSizes(sizes) << " overflows int64";
    numel *= sizes[d];
  }
  return numel;
}

// Storage of Braze's own tensors: 64-byte aligned (so that vectorized GPU copies and AVX loads
// of host buffers never see a misaligned base) and never null, even when empty.
std::shared_ptr<void> allocateStorage(int64_t bytes) {
  const auto alignment = static_cast<size_t>(kAlignment);
  const size_t size =
      (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + alignment - 1) / alignment * alignment;
  void* data = ::operator new(size, kAlignment);
  return std::shared_ptr<void>(data, [](void* p) { ::operator delete(p, kAlignment); });
}

// Copies element bytes between two strided buffers of the same element size.
template <typename Word>
void copyWords(const HostTensor& source, void* destination) {
  eval_detail::StridedOperands<2> walk;
  walk.sizes = source.sizes();
  walk.strides = {source.strides(), eval_detail::contiguousStrides(source.sizes())};
  const auto* from = static_cast<const Word*>(source.data());
  auto* to = static_cast<Word*>(destination);
  eval_detail::walkStrided(walk,
                           [&](const std::array<int64_t, 2>& at) { to[at[1]] = from[at[0]]; });
}

}  // namespace

HostTensor HostTensor::empty(DataType dtype, std::vector<int64_t> sizes) {
  const int64_t numel = checkedNumel(sizes, "HostTensor::empty");
  BRAZE_USER_CHECK(numel <= INT64_MAX / sizeInBytes(dtype))
      << "HostTensor::empty: " << formatSizes(sizes) << " elements of " << dtype
      << " do not fit in memory";
  HostTensor tensor;
  tensor.dtype_ = dtype;
  tensor.strides_ = eval_detail::contiguousStrides(sizes);
  tensor.sizes_ = std::move(sizes);
  tensor.owner_ = allocateStorage(numel * sizeInBytes(dtype));
  tensor.data_ = tensor.owner_.get();
  return tensor;
}

HostTensor HostTensor::empty(DataType dtype, std::vector<int64_t> sizes,
                             const std::vector<int64_t>& allocation_order) {
  BRAZE_USER_CHECK(allocation_order.empty() || allocation_order.size() == sizes.size())
      << "HostTensor::empty: allocation order " << formatSizes(allocation_order) << " for sizes "
      << formatSizes(sizes) << "; give one entry per dim";
  HostTensor tensor = empty(dtype, sizes);
  tensor.strides_ = denseStrides(tensor.sizes_, allocation_order);
  return tensor;
}

HostTensor HostTensor::full(DataType dtype, std::vector<int64_t> sizes, ScalarValue value) {
  HostTensor tensor = empty(dtype, std::move(sizes));
  const int64_t numel = tensor.numel();
  if (numel == 0) return tensor;
  // Convert once, then replicate the bytes.
  storeElement(dtype, tensor.data_, 0, value);
  const int64_t element_size = sizeInBytes(dtype);
  auto* bytes = static_cast<char*>(tensor.data_);
  for (int64_t i = 1; i < numel; ++i) {
    std::memcpy(bytes + i * element_size, bytes, static_cast<size_t>(element_size));
  }
  return tensor;
}

HostTensor HostTensor::borrow(DataType dtype, std::vector<int64_t> sizes,
                              std::vector<int64_t> strides, void* data,
                              std::shared_ptr<void> owner) {
  BRAZE_USER_CHECK(sizes.size() == strides.size())
      << "HostTensor::borrow: sizes " << formatSizes(sizes) << " and strides "
      << formatSizes(strides) << " have different lengths";
  const int64_t numel = checkedNumel(sizes, "HostTensor::borrow");
  BRAZE_USER_CHECK(data != nullptr || numel == 0)
      << "HostTensor::borrow: data is null for a tensor of " << numel << " elements";
  HostTensor tensor;
  tensor.dtype_ = dtype;
  tensor.sizes_ = std::move(sizes);
  tensor.strides_ = std::move(strides);
  tensor.data_ = data;
  tensor.owner_ = std::move(owner);
  return tensor;
}

int64_t HostTensor::size(int64_t dim) const {
  BRAZE_USER_CHECK(dim >= -rank() && dim < rank())
      << "HostTensor::size: dim " << dim << " is out of range for " << describe()
      << "; valid dims are " << -rank() << " .. " << rank() - 1;
  return sizes_[static_cast<size_t>(dim < 0 ? dim + rank() : dim)];
}

int64_t HostTensor::numel() const {
  return numelOf(sizes_);
}

bool HostTensor::isContiguous() const {
  return isContiguousLayout(sizes_, strides_);
}

ScalarValue HostTensor::at(const std::vector<int64_t>& index) const {
  BRAZE_USER_CHECK(static_cast<int64_t>(index.size()) == rank())
      << "HostTensor::at: index " << formatSizes(index) << " has " << index.size()
      << " entries but the tensor " << describe() << " has rank " << rank();
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    BRAZE_USER_CHECK(index[d] >= 0 && index[d] < sizes_[d])
        << "HostTensor::at: index " << formatSizes(index) << " is out of range at dim " << d
        << " of " << describe();
    offset += index[d] * strides_[d];
  }
  return loadElement(dtype_, data_, offset);
}

void HostTensor::set(const std::vector<int64_t>& index, ScalarValue value) {
  BRAZE_USER_CHECK(static_cast<int64_t>(index.size()) == rank())
      << "HostTensor::set: index " << formatSizes(index) << " has " << index.size()
      << " entries but the tensor " << describe() << " has rank " << rank();
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    BRAZE_USER_CHECK(index[d] >= 0 && index[d] < sizes_[d])
        << "HostTensor::set: index " << formatSizes(index) << " is out of range at dim " << d
        << " of " << describe();
    offset += index[d] * strides_[d];
  }
  storeElement(dtype_, data_, offset, value);
}

namespace {

// Element offset of row-major position `position`.
int64_t offsetOfPosition(const HostTensor& tensor, int64_t position, std::string_view what) {
  BRAZE_USER_CHECK(position >= 0 && position < tensor.numel())
      << what << ": position " << position << " is out of range for " << tensor.describe() << " ("
      << tensor.numel() << " elements)";
  int64_t offset = 0;
  for (int64_t d = tensor.rank(); d-- > 0;) {
    const int64_t size = tensor.sizes()[static_cast<size_t>(d)];
    offset += (position % size) * tensor.strides()[static_cast<size_t>(d)];
    position /= size;
  }
  return offset;
}

}  // namespace

ScalarValue HostTensor::atFlat(int64_t position) const {
  return loadElement(dtype_, data_, offsetOfPosition(*this, position, "HostTensor::atFlat"));
}

void HostTensor::setFlat(int64_t position, ScalarValue value) {
  storeElement(dtype_, data_, offsetOfPosition(*this, position, "HostTensor::setFlat"), value);
}

HostTensor HostTensor::permuted(const std::vector<int64_t>& dims) const {
  BRAZE_USER_CHECK(static_cast<int64_t>(dims.size()) == rank())
      << "HostTensor::permuted: " << formatSizes(dims) << " has " << dims.size()
      << " entries but the tensor " << describe() << " has rank " << rank();
  std::vector<bool> seen(dims.size(), false);
  HostTensor view = *this;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t dim = dims[i];
    BRAZE_USER_CHECK(dim >= 0 && dim < rank() && !seen[static_cast<size_t>(dim)])
        << "HostTensor::permuted: " << formatSizes(dims) << " is not a permutation of 0.."
        << rank() - 1;
    seen[static_cast<size_t>(dim)] = true;
    view.sizes_[i] = sizes_[static_cast<size_t>(dim)];
    view.strides_[i] = strides_[static_cast<size_t>(dim)];
  }
  return view;
}

HostTensor HostTensor::strided(int64_t dim, int64_t start, int64_t step) const {
  BRAZE_USER_CHECK(dim >= 0 && dim < rank())
      << "HostTensor::strided: dim " << dim << " is out of range for " << describe();
  const int64_t size = sizes_[static_cast<size_t>(dim)];
  BRAZE_USER_CHECK(step > 0) << "HostTensor::strided: step " << step << " must be positive";
  BRAZE_USER_CHECK(start >= 0 && start <= size)
      << "HostTensor::strided: start " << start << " is out of range [0, " << size << "] for dim "
      << dim << " of " << describe();
  HostTensor view = *this;
  const int64_t count = (size - start + step - 1) / step;
  view.sizes_[static_cast<size_t>(dim)] = count;
  view.strides_[static_cast<size_t>(dim)] = strides_[static_cast<size_t>(dim)] * step;
  if (count > 0) {
    view.data_ = static_cast<char*>(data_) +
                 start * strides_[static_cast<size_t>(dim)] * sizeInBytes(dtype_);
  }
  return view;
}

HostTensor HostTensor::narrowed(int64_t dim, int64_t start, int64_t length) const {
  HostTensor view = strided(dim, start, 1);
  BRAZE_USER_CHECK(length >= 0 && length <= view.sizes_[static_cast<size_t>(dim)])
      << "HostTensor::narrowed: elements [" << start << ", " << start + length << ") of dim " << dim
      << " are out of range for " << describe();
  view.sizes_[static_cast<size_t>(dim)] = length;
  return view;
}

HostTensor HostTensor::expanded(const std::vector<int64_t>& sizes) const {
  BRAZE_USER_CHECK(static_cast<int64_t>(sizes.size()) >= rank())
      << "HostTensor::expanded: " << formatSizes(sizes) << " has fewer dims than " << describe();
  HostTensor view = *this;
  const size_t leading = sizes.size() - sizes_.size();
  view.sizes_.assign(sizes.size(), 1);
  view.strides_.assign(sizes.size(), 0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const bool is_new = i < leading;
    const int64_t old_size = is_new ? 1 : sizes_[i - leading];
    const int64_t new_size = sizes[i] == -1 && !is_new ? old_size : sizes[i];
    BRAZE_USER_CHECK(new_size >= 0 && (new_size == old_size || old_size == 1))
        << "HostTensor::expanded: cannot expand " << describe() << " to " << formatSizes(sizes)
        << ": dim " << i << " has size " << old_size << "; only size-1 dims can be expanded";
    view.sizes_[i] = new_size;
    view.strides_[i] = is_new || (old_size == 1 && new_size != 1) ? 0 : strides_[i - leading];
  }
  return view;
}

HostTensor HostTensor::contiguous() const {
  HostTensor copy = empty(dtype_, sizes_);
  if (copy.numel() == 0) return copy;
  switch (sizeInBytes(dtype_)) {
    case 1:
      copyWords<uint8_t>(*this, copy.data_);
      break;
    case 2:
      copyWords<uint16_t>(*this, copy.data_);
      break;
    case 4:
      copyWords<uint32_t>(*this, copy.data_);
      break;
    default:
      copyWords<uint64_t>(*this, copy.data_);
      break;
  }
  return copy;
}

std::string HostTensor::describe() const {
  std::ostringstream os;
  os << dtype_ << formatSizes(sizes_) << " strides " << formatSizes(strides_);
  return os.str();
}

ScalarValue loadElement(DataType dtype, const void* base, int64_t offset_elements) {
  switch (dtype) {
    case DataType::Bool:
      // Read as a byte: a foreign buffer may hold any nonzero byte for true.
      return static_cast<const uint8_t*>(base)[offset_elements] != 0;
    case DataType::Int32:
      return static_cast<int64_t>(static_cast<const int32_t*>(base)[offset_elements]);
    case DataType::Int64:
    case DataType::Index:
      return static_cast<const int64_t*>(base)[offset_elements];
    case DataType::Float16:
      return eval_detail::decodeFloat16(static_cast<const uint16_t*>(base)[offset_elements]);
    case DataType::BFloat16:
      return eval_detail::decodeBFloat16(static_cast<const uint16_t*>(base)[offset_elements]);
    case DataType::Float8_e4m3fn:
      return eval_detail::decodeFloat8E4M3fn(static_cast<const uint8_t*>(base)[offset_elements]);
    case DataType::Float8_e5m2:
      return eval_detail::decodeFloat8E5M2(static_cast<const uint8_t*>(base)[offset_elements]);
    case DataType::Float32:
      return static_cast<double>(static_cast<const float*>(base)[offset_elements]);
    case DataType::Float64:
      return static_cast<const double*>(base)[offset_elements];
  }
  BRAZE_INTERNAL_CHECK(false) << "loadElement: unknown dtype " << static_cast<int>(dtype);
}

void storeElement(DataType dtype, void* base, int64_t offset_elements, const ScalarValue& value) {
  switch (dtype) {
    case DataType::Bool:
      static_cast<uint8_t*>(base)[offset_elements] = toBool(value) ? 1 : 0;
      return;
    case DataType::Int32:
      static_cast<int32_t*>(base)[offset_elements] =
          static_cast<int32_t>(std::get<int64_t>(castScalar(value, DataType::Int32)));
      return;
    case DataType::Int64:
    case DataType::Index:
      static_cast<int64_t*>(base)[offset_elements] = toInt64(value);
      return;
    case DataType::Float16:
      static_cast<uint16_t*>(base)[offset_elements] =
          eval_detail::encodeFloat16(roundToPrecision(toDouble(value), DataType::Float16));
      return;
    case DataType::BFloat16:
      static_cast<uint16_t*>(base)[offset_elements] =
          eval_detail::encodeBFloat16(roundToPrecision(toDouble(value), DataType::BFloat16));
      return;
    case DataType::Float8_e4m3fn:
      static_cast<uint8_t*>(base)[offset_elements] = eval_detail::encodeFloat8E4M3fn(
          roundToPrecision(toDouble(value), DataType::Float8_e4m3fn));
      return;
    case DataType::Float8_e5m2:
      static_cast<uint8_t*>(base)[offset_elements] =
          eval_detail::encodeFloat8E5M2(roundToPrecision(toDouble(value), DataType::Float8_e5m2));
      return;
    case DataType::Float32:
      static_cast<float*>(base)[offset_elements] =
          static_cast<float>(roundToPrecision(toDouble(value), DataType::Float32));
      return;
    case DataType::Float64:
      static_cast<double*>(base)[offset_elements] = toDouble(value);
      return;
  }
  BRAZE_INTERNAL_CHECK(false) << "storeElement: unknown dtype " << static_cast<int>(dtype);
}

}  // namespace braze
