#pragma once

// Comparing an evaluated tensor with expected values computed by the test.

#include <optional>
#include <source_location>
#include <vector>

#include <gtest/gtest.h>

#include "braze/eval/host_tensor.h"

namespace braze::test {

/// |actual - expected| <= atol + rtol * |expected| passes.
struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

/// The default tolerance of results stored in `dtype`: float64 1e-12, float32 1e-5,
/// float16 1e-3, bfloat16 1e-2 (relative and absolute); integers and bools exact.
Tolerance toleranceFor(DataType dtype);

/// What a test expects of a result: dtype, sizes and row-major values.
struct ExpectedTensor {
  DataType dtype;
  std::vector<int64_t> sizes;
  std::vector<double> values;
};

/// Whether `actual` has the expected dtype and sizes and every value is within tolerance
/// (nan matches nan; an infinity matches only itself). A failure lists the number of
/// mismatches and the first few, with their index and both values.
::testing::AssertionResult isClose(const HostTensor& actual, const ExpectedTensor& expected,
                                   std::optional<Tolerance> tolerance = std::nullopt);
/// As above, with the expected dtype, sizes and values taken from a tensor.
::testing::AssertionResult isClose(const HostTensor& actual, const HostTensor& expected,
                                   std::optional<Tolerance> tolerance = std::nullopt);

/// EXPECT_TRUE(isClose(...)), reported at the caller's line.
void expectClose(const HostTensor& actual, const ExpectedTensor& expected,
                 std::optional<Tolerance> tolerance = std::nullopt,
                 std::source_location where = std::source_location::current());
void expectClose(const HostTensor& actual, const HostTensor& expected,
                 std::optional<Tolerance> tolerance = std::nullopt,
                 std::source_location where = std::source_location::current());

}  // namespace braze::test
