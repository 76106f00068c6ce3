#pragma once

// Seeded random test tensors. Each test makes its own RandomTensors with a fixed seed, so a
// failure reproduces exactly.

#include <cstdint>
#include <random>
#include <vector>

#include "braze/eval/host_tensor.h"

namespace braze::test {

class RandomTensors {
 public:
  explicit RandomTensors(uint64_t seed) : engine_(seed) {}

  /// A contiguous tensor of values drawn uniformly from [low, high] and rounded to `dtype`
  /// (integers: whole numbers in the range; bool: true or false). A tensor with elements is
  /// never all zero: one element is then replaced by a nonzero value of the range.
  HostTensor uniform(DataType dtype, std::vector<int64_t> sizes, double low = -2.0,
                     double high = 2.0);

  /// As uniform(), but every element has |value| >= min_abs (after rounding): divisors,
  /// arguments of reciprocal and log, and so on. The range must contain such values.
  HostTensor nonZero(DataType dtype, std::vector<int64_t> sizes, double low = -2.0,
                     double high = 2.0, double min_abs = 0.25);

  /// A random permutation of 0 .. rank-1; never the identity when rank >= 2.
  std::vector<int64_t> permutation(int64_t rank);

  /// A single value uniform in [low, high].
  double value(double low, double high);
  /// A single integer uniform in [low, high].
  int64_t integer(int64_t low, int64_t high);

 private:
  double draw(DataType dtype, double low, double high);

  std::mt19937_64 engine_;
};

/// The values of `tensor` in a new buffer laid out in `allocation_order` (dims from outermost
/// to innermost, as TensorSpec::allocation_order): a non-contiguous view with the same sizes,
/// whose dims are all contiguous in that order.
HostTensor withAllocationOrder(const HostTensor& tensor,
                               const std::vector<int64_t>& allocation_order);

/// The values of `tensor` in a new buffer laid out in `allocation_order` (default: row-major)
/// in which dim `dim` advances `step` times its dense stride (a view made with
/// HostTensor::strided), so `dim` is not contiguous. The skipped elements hold a sentinel (nan
/// for floats, -777 for integers) so a read of the wrong element shows.
HostTensor withGaps(const HostTensor& tensor, int64_t dim, int64_t step,
                    std::vector<int64_t> allocation_order = {});

}  // namespace braze::test
