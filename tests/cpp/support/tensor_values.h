#pragma once

// Reading and writing the elements of HostTensors without HostTensor's own accessors, so that
// tests do not trust the code they check: elements are decoded from raw memory through the
// tensor's sizes and strides, and float16/bfloat16 are encoded and rounded here.
//
// Values travel as doubles: exact for every float dtype and for integers up to 2^53;
// integersOf / tensorOfIntegers cover the full int64 range.

#include <cstdint>
#include <vector>

#include "braze/eval/host_tensor.h"
#include "braze/ir/data_type.h"

namespace braze::test {

/// `value` as a tensor of `dtype` would hold it: floats round to nearest even (overflowing to
/// inf, keeping nan), integers truncate toward zero and wrap to their width (nan gives 0),
/// bool is `value != 0`.
double roundTo(DataType dtype, double value);

/// The elements of `tensor` in row-major order of its sizes.
std::vector<double> valuesOf(const HostTensor& tensor);

/// Stores `values` (row-major, one per element) into `tensor` through its strides, rounding
/// each to the tensor's dtype.
void writeValues(const HostTensor& tensor, const std::vector<double>& values);

/// A new contiguous tensor holding `values`, rounded to `dtype`.
HostTensor tensorOf(DataType dtype, std::vector<int64_t> sizes, const std::vector<double>& values);

/// A 0-d tensor holding `value`.
HostTensor scalarTensor(DataType dtype, double value);

/// Exact access for integer tensors (Int32, Int64, Index) whose values do not fit a double:
/// the elements in row-major order, and a new contiguous tensor of `values` (wrapped to the
/// dtype's width).
std::vector<int64_t> integersOf(const HostTensor& tensor);
HostTensor tensorOfIntegers(DataType dtype, std::vector<int64_t> sizes,
                            const std::vector<int64_t>& values);

}  // namespace braze::test
