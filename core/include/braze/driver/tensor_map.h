#pragma once

// Tensor maps: the descriptors the bulk tensor copy engine (TMA, sm_90 and later) reads to move
// a box of a global tensor to or from shared memory. The host encodes one per tensor and tile
// shape; the kernel takes it by value as a `const __grid_constant__ braze::TensorMap`
// parameter (core/src/codegen/runtime/bulk_copy.cuh) and names boxes by their coordinates.

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "braze/ir/data_type.h"

namespace braze::driver {

/// The unit of TensorMapSpec::strides.
enum class StrideUnit { Elements, Bytes };

/// What to encode: a strided tensor of up to 5 dims in global memory and the box one copy
/// moves. Every per-dim list is in the hardware's order, innermost (contiguous) dim first, the
/// reverse of a row-major shape: a row-major [rows, cols] matrix has dims {cols, rows}. Kernel
/// coordinates use the same order.
struct TensorMapSpec {
  /// Names the tensor in error messages ("A", "output of segment 2").
  std::string name = "tensor";
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  /// The tensor's first element: 16-byte aligned (32 with 32-byte interleave).
  CUdeviceptr address = 0;
  /// Size of each dim in elements, innermost first: 1 to 5 dims, each 1 to 2^32.
  std::vector<uint64_t> dims = {};
  /// Stride of dims 1 .. rank-1 (dim 0 is contiguous and has none), in `stride_unit`. In bytes
  /// each must be a multiple of 16 (32 with 32-byte interleave) and below 2^40.
  std::vector<uint64_t> strides = {};
  StrideUnit stride_unit = StrideUnit::Elements;
  /// Elements one copy moves along each dim, innermost first, each 1 to 256. Without
  /// interleave the innermost box row must be a multiple of 16 bytes, and with a swizzle at
  /// most the swizzle's span (32, 64 or 128 bytes).
  std::vector<uint32_t> box = {};
  /// Step between the elements a copy visits along each dim (1 to 8); empty means all 1.
  std::vector<uint32_t> element_strides = {};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  /// How the box is laid out in shared memory; wgmma reads 128-byte swizzled tiles without
  /// bank conflicts.
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  /// What a load writes for elements outside the tensor: zeros (NONE) or, for floating-point
  /// dtypes, a NaN that the tensor cores read as zero.
  CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;

  /// One line for messages: "tensor 'A': bfloat16, dims {256, 512} (innermost first), ...".
  std::string describe() const;
};

/// The tensor-map element type of a Braze dtype: the float types as themselves, Int32, Int64
/// and Index (stored as 64 bits) as integers, Bool and the float8 types as bytes (the copy
/// engine moves them; what they mean is the kernel's business).
CUtensorMapDataType tensorMapDataTypeOf(DataType dtype);

/// The bytes of one element of `dtype` (4 for the 32-bit types); throws for the packed sub-byte
/// types, which TensorMapSpec does not support.
int64_t tensorMapElementBytes(CUtensorMapDataType dtype);

/// Checks `spec` against the rules of cuTensorMapEncodeTiled without calling the driver (so it
/// runs on a machine without a GPU), and throws a braze::Error naming the tensor, the dim and
/// the rule, with what to change. The driver's own answer to a bad spec is a bare
/// CUDA_ERROR_INVALID_VALUE.
void validateTensorMap(const TensorMapSpec& spec);

/// Validates `spec` and encodes it with cuTensorMapEncodeTiled. The result is 128 bytes,
/// aligned as the driver requires, to be passed by value (KernelArguments::addTensorMap). It
/// holds `spec.address`: encode again when the tensor moves. Needs the driver.
CUtensorMap encodeTensorMap(const TensorMapSpec& spec);

}  // namespace braze::driver
