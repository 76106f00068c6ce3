#include "support/tensor_compare.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "support/multi_index.h"
#include "support/tensor_values.h"

namespace braze::test {
namespace {

constexpr int kMismatchesShown = 5;

bool withinTolerance(double actual, double expected, const Tolerance& tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::fabs(actual - expected) <= tolerance.atol + tolerance.rtol * std::fabs(expected);
}

std::string formatIndex(const std::vector<int64_t>& index) {
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < index.size(); ++d) out << (d ? ", " : "") << index[d];
  out << "]";
  return out.str();
}

void reportFailure(const ::testing::AssertionResult& result, const std::source_location& where) {
  if (!result)
    ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line())) << result.message();
}

}  // namespace

Tolerance toleranceFor(DataType dtype) {
  switch (dtype) {
    case DataType::Float64:
      return {1e-12, 1e-12};
    case DataType::Float32:
      return {1e-5, 1e-5};
    case DataType::Float16:
      return {1e-3, 1e-3};
    case DataType::BFloat16:
      return {1e-2, 1e-2};
    // One float8 step: 2^-3 relative for e4m3fn, 2^-2 for e5m2 (a float32 an ulp off may land
    // on the other neighbor).
    case DataType::Float8_e4m3fn:
      return {0.125, 1e-2};
    case DataType::Float8_e5m2:
      return {0.25, 1e-2};
    default:
      return {0.0, 0.0};
  }
}

::testing::AssertionResult isClose(const HostTensor& actual, const ExpectedTensor& expected,
                                   std::optional<Tolerance> tolerance) {
  if (actual.dtype() != expected.dtype) {
    return ::testing::AssertionFailure()
           << "dtype: got " << actual.dtype() << ", expected " << expected.dtype;
  }
  if (actual.sizes() != expected.sizes) {
    return ::testing::AssertionFailure() << "sizes: got " << formatIndex(actual.sizes())
                                         << ", expected " << formatIndex(expected.sizes);
  }
  if (static_cast<int64_t>(expected.values.size()) != numelOf(expected.sizes)) {
    return ::testing::AssertionFailure() << "the test expects " << expected.values.size()
                                         << " values for sizes " << formatIndex(expected.sizes);
  }
  const Tolerance used = tolerance.value_or(toleranceFor(expected.dtype));
  const std::vector<double> values = valuesOf(actual);
  std::ostringstream mismatches;
  // Enough digits to tell neighbouring values of the dtype apart.
  mismatches << std::setprecision(expected.dtype == DataType::Float64 ? 17 : 9);
  int64_t count = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (withinTolerance(values[i], expected.values[i], used)) continue;
    if (++count <= kMismatchesShown) {
      mismatches << "\n  at " << formatIndex(unravelIndex(static_cast<int64_t>(i), expected.sizes))
                 << ": got " << values[i] << ", expected " << expected.values[i] << " (diff "
                 << std::fabs(values[i] - expected.values[i]) << ")";
    }
  }
  if (count == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << count << " of " << values.size() << " elements of " << actual.describe()
         << " differ (rtol " << used.rtol << ", atol " << used.atol << ")" << mismatches.str()
         << (count > kMismatchesShown ? "\n  ..." : "");
}

::testing::AssertionResult isClose(const HostTensor& actual, const HostTensor& expected,
                                   std::optional<Tolerance> tolerance) {
  return isClose(actual, ExpectedTensor{expected.dtype(), expected.sizes(), valuesOf(expected)},
                 tolerance);
}

void expectClose(const HostTensor& actual, const ExpectedTensor& expected,
                 std::optional<Tolerance> tolerance, std::source_location where) {
  reportFailure(isClose(actual, expected, tolerance), where);
}

void expectClose(const HostTensor& actual, const HostTensor& expected,
                 std::optional<Tolerance> tolerance, std::source_location where) {
  reportFailure(isClose(actual, expected, tolerance), where);
}

}  // namespace braze::test
