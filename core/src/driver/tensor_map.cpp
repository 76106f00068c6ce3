#include "braze/driver/tensor_map.h"

#include <sstream>

#include "braze/driver/cuda_driver.h"
#include "braze/error.h"

namespace braze::driver {

namespace {

constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kMaxStrideBytes = uint64_t{1} << 40;
constexpr uint32_t kMaxBox = 256;
constexpr uint32_t kMaxElementStride = 8;
constexpr size_t kMaxRank = 5;

const char* dtypeName(CUtensorMapDataType dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
      return "uint8";
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
      return "uint16";
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
      return "uint32";
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
      return "int32";
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
      return "uint64";
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
      return "int64";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
      return "float16";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
      return "float32";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
      return "float64";
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
      return "bfloat16";
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
      return "float32_ftz";
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
      return "tfloat32";
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return "tfloat32_ftz";
    default:
      return "a packed sub-byte type";
  }
}

bool isFloatingPoint(CUtensorMapDataType dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return true;
    default:
      return false;
  }
}

// The span of 16-byte chunks one swizzle pattern permutes: a box row may not be longer.
uint64_t swizzleSpanBytes(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_NONE:
      return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B:
      return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B:
      return 64;
    default:
      return 128;
  }
}

template <typename T>
std::string listOf(const std::vector<T>& values) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "}";
  return os.str();
}

// Strides of dims 1 .. rank-1 in bytes.
std::vector<uint64_t> strideBytes(const TensorMapSpec& spec, uint64_t element_bytes) {
  std::vector<uint64_t> bytes = spec.strides;
  if (spec.stride_unit == StrideUnit::Elements) {
    for (uint64_t& stride : bytes) stride *= element_bytes;
  }
  return bytes;
}

}  // namespace

CUtensorMapDataType tensorMapDataTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::Float16:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DataType::BFloat16:
      return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DataType::Float32:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case DataType::Float64:
      return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case DataType::Int32:
      return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case DataType::Int64:
    case DataType::Index:
      return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case DataType::Bool:
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  BRAZE_THROW() << "tensor map: no element type for " << dtype;
}

int64_t tensorMapElementBytes(CUtensorMapDataType dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
      return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
      return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
      return 8;
    default:
      BRAZE_THROW() << "tensor map: the packed sub-byte data type " << static_cast<int>(dtype)
                    << " is not supported; use one of the 1- to 8-byte types";
  }
}

std::string TensorMapSpec::describe() const {
  std::ostringstream os;
  os << "tensor '" << name << "': " << dtypeName(dtype) << ", dims " << listOf(dims)
     << " (innermost first), strides " << listOf(strides)
     << (stride_unit == StrideUnit::Bytes ? " bytes" : " elements") << ", box " << listOf(box)
     << ", swizzle "
     << (swizzleSpanBytes(swizzle) ? std::to_string(swizzleSpanBytes(swizzle)) + "B"
                                   : std::string("none"));
  return os.str();
}

void validateTensorMap(const TensorMapSpec& spec) {
  const std::string who = "tensor map for '" + spec.name + "'";
  const size_t rank = spec.dims.size();
  BRAZE_USER_CHECK(rank >= 1 && rank <= kMaxRank)
      << who << ": " << rank << " dims; the copy engine moves tensors of 1 to 5 dims. Merge "
      << "contiguous dims (or split the copy into several maps) to get 5 or fewer";
  const int64_t element_bytes = tensorMapElementBytes(spec.dtype);
  const bool interleaved = spec.interleave != CU_TENSOR_MAP_INTERLEAVE_NONE;
  const bool interleave32 = spec.interleave == CU_TENSOR_MAP_INTERLEAVE_32B;
  BRAZE_USER_CHECK(!interleaved || rank >= 3)
      << who << ": an interleaved layout needs at least 3 dims, not " << rank
      << "; use CU_TENSOR_MAP_INTERLEAVE_NONE";
  BRAZE_USER_CHECK(!interleave32 || spec.swizzle == CU_TENSOR_MAP_SWIZZLE_32B)
      << who << ": 32-byte interleave works only with CU_TENSOR_MAP_SWIZZLE_32B";

  const uint64_t address_alignment = interleave32 ? 32 : 16;
  BRAZE_USER_CHECK(spec.address != 0) << who << ": the global address is null";
  BRAZE_USER_CHECK(spec.address % address_alignment == 0)
      << who << ": the global address 0x" << std::hex << spec.address << std::dec << " is not "
      << address_alignment << "-byte aligned; the copy engine needs it. "
      << "Allocate the tensor aligned, or copy it through a kernel that does not use tensor maps";

  for (size_t d = 0; d < rank; ++d) {
    BRAZE_USER_CHECK(spec.dims[d] >= 1 && spec.dims[d] <= kMaxDim)
        << who << ": dim " << d << (d == 0 ? " (innermost)" : "") << " has size " << spec.dims[d]
        << "; sizes must be 1 to 2^32 (an empty tensor needs no copy: skip the launch)";
  }

  BRAZE_USER_CHECK(spec.strides.size() + 1 == rank)
      << who << ": " << spec.strides.size() << " strides for " << rank
      << " dims; give the strides of dims 1 .. " << rank - 1
      << " (dim 0, the innermost, is contiguous and has none)";
  const std::vector<uint64_t> strides = strideBytes(spec, static_cast<uint64_t>(element_bytes));
  const uint64_t stride_alignment = interleave32 ? 32 : 16;
  for (size_t i = 0; i < strides.size(); ++i) {
    const size_t d = i + 1;
    BRAZE_USER_CHECK(strides[i] % stride_alignment == 0)
        << who << ": the stride of dim " << d << " is " << strides[i]
        << " bytes, not a multiple of " << stride_alignment
        << "; pad the rows of the tensor (e.g. its inner size to a multiple of "
        << stride_alignment / static_cast<uint64_t>(element_bytes)
        << " elements) or use a kernel without tensor maps";
    BRAZE_USER_CHECK(strides[i] < kMaxStrideBytes)
        << who << ": the stride of dim " << d << " is " << strides[i]
        << " bytes; the copy engine takes strides below 2^40 bytes. Split the tensor";
  }

  BRAZE_USER_CHECK(spec.box.size() == rank)
      << who << ": " << spec.box.size() << " box sizes for " << rank << " dims; give one per dim";
  for (size_t d = 0; d < rank; ++d) {
    BRAZE_USER_CHECK(spec.box[d] >= 1 && spec.box[d] <= kMaxBox)
        << who << ": box dim " << d << " is " << spec.box[d]
        << " elements; a box spans 1 to 256 elements per dim. Use a smaller tile or several copies";
  }
  const uint64_t inner_box_bytes = spec.box[0] * static_cast<uint64_t>(element_bytes);
  if (!interleaved) {
    BRAZE_USER_CHECK(inner_box_bytes % 16 == 0)
        << who << ": the innermost box row is " << spec.box[0] << " elements = " << inner_box_bytes
        << " bytes, not a multiple of 16; make box dim 0 a multiple of " << 16 / element_bytes
        << " elements";
    const uint64_t span = swizzleSpanBytes(spec.swizzle);
    BRAZE_USER_CHECK(span == 0 || inner_box_bytes <= span)
        << who << ": the innermost box row is " << inner_box_bytes << " bytes, more than the "
        << span << "-byte swizzle span; make box dim 0 at most "
        << span / static_cast<uint64_t>(element_bytes)
        << " elements (and load wider tiles as several boxes) or pick a wider swizzle";
  }

  BRAZE_USER_CHECK(spec.element_strides.empty() || spec.element_strides.size() == rank)
      << who << ": " << spec.element_strides.size() << " element strides for " << rank
      << " dims; give one per dim, or none for all 1";
  for (size_t d = 0; d < spec.element_strides.size(); ++d) {
    BRAZE_USER_CHECK(spec.element_strides[d] >= 1 && spec.element_strides[d] <= kMaxElementStride)
        << who << ": element stride " << d << " is " << spec.element_strides[d]
        << "; element strides are 1 to 8";
  }
  BRAZE_USER_CHECK(spec.oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ||
                   isFloatingPoint(spec.dtype))
      << who << ": NaN out-of-bounds fill needs a floating-point dtype, not "
      << dtypeName(spec.dtype) << "; use CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros)";
}

CUtensorMap encodeTensorMap(const TensorMapSpec& spec) {
  validateTensorMap(spec);
  const size_t rank = spec.dims.size();
  const auto element_bytes = static_cast<uint64_t>(tensorMapElementBytes(spec.dtype));
  const std::vector<uint64_t> strides = strideBytes(spec, element_bytes);
  std::vector<cuuint64_t> dims(spec.dims.begin(), spec.dims.end());
  std::vector<cuuint64_t> stride_bytes(strides.begin(), strides.end());
  std::vector<cuuint32_t> box(spec.box.begin(), spec.box.end());
  std::vector<cuuint32_t> element_strides(rank, 1);
  if (!spec.element_strides.empty())
    element_strides.assign(spec.element_strides.begin(), spec.element_strides.end());
  CUtensorMap map{};
  checkDriver(driverApi().tensorMapEncodeTiled(
                  &map, spec.dtype, static_cast<cuuint32_t>(rank),
                  reinterpret_cast<void*>(static_cast<uintptr_t>(spec.address)), dims.data(),
                  stride_bytes.data(), box.data(), element_strides.data(), spec.interleave,
                  spec.swizzle, spec.l2_promotion, spec.oob_fill),
              "cuTensorMapEncodeTiled", "(" + spec.describe() + ")");
  return map;
}

}  // namespace braze::driver
