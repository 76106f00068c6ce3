// welford, var and var_mean. One Welford Expr computes the mean, the sum of squared
// deviations (m2) and the count n in a single pass; var divides m2 by n - correction:
//
//   var(x: float32[s0, s1], {1})  ->  T1, T2, T3 = welford(T0, axes=[1])   (avg, m2, n: index)
//                                     T4 = div(T2, s1 - 1)
//
// var divides by the count as a scalar (the product of the reduced extents) rather than by n,
// so that n is left unread and a fusion's Welford can become two sums where that is cheaper
// (braze/ir/welford_as_sums.h).

#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "ops/domain_builder.h"
#include "ops/reduction_output.h"

namespace braze {

namespace {

using ops_detail::castIfNeeded;
using ops_detail::keepReducedDims;
using ops_detail::newReductionOutput;

struct WelfordParts {
  WelfordResult result;
  std::vector<int64_t> axes;  // normalized
};

// The Welford Expr over x, in float32 for float16/bfloat16 inputs. `op` names the builder the
// user called, for its errors.
WelfordParts buildWelford(std::string_view op, TensorView* x, const std::vector<int64_t>& axes) {
  BRAZE_USER_CHECK(x != nullptr) << op << ": the input tensor is null";
  BRAZE_USER_CHECK(isFloatingPoint(x->dtype()))
      << op << " of " << ops_detail::tensorLabel(x) << ": the input has dtype " << x->dtype()
      << ", but mean and variance need a floating input; cast it to float32 first";
  const std::vector<int64_t> normalized = ops_detail::normalizeReductionAxes(op, x, axes);
  const DataType accumulation = isReducedPrecision(x->dtype()) ? DataType::Float32 : x->dtype();
  TensorView* input = castIfNeeded(x, accumulation);
  TensorView* avg = newReductionOutput(input, normalized, accumulation);
  TensorView* m2 = newReductionOutput(input, normalized, accumulation);
  TensorView* n = newReductionOutput(input, normalized, DataType::Index);
  x->fusion().create<Expr>(OpKind::Welford, std::vector<Val*>{input}, std::vector<Val*>{avg, m2, n},
                           std::vector<Attribute>{{"axes", normalized}});
  return {{avg, m2, n}, normalized};
}

// m2 / (count - correction). As in PyTorch, a correction at or above the count gives inf or nan
// rather than an error: the count is only known when the fusion runs.
TensorView* varianceOf(const WelfordParts& parts, const TensorView* x, int64_t correction) {
  return div(parts.result.m2, sub(ops_detail::reducedElementCount(x, parts.axes), correction));
}

}  // namespace

WelfordResult welford(TensorView* x, std::vector<int64_t> axes) {
  return buildWelford("welford", x, axes).result;
}

TensorView* var(TensorView* x, std::vector<int64_t> axes, int64_t correction, bool keepdim) {
  const WelfordParts parts = buildWelford("var", x, axes);
  TensorView* variance = castIfNeeded(varianceOf(parts, x, correction), x->dtype());
  return keepdim ? keepReducedDims(variance, parts.axes, x->rank()) : variance;
}

VarMeanResult var_mean(TensorView* x, std::vector<int64_t> axes, int64_t correction, bool keepdim) {
  const WelfordParts parts = buildWelford("var_mean", x, axes);
  TensorView* variance = castIfNeeded(varianceOf(parts, x, correction), x->dtype());
  TensorView* average = castIfNeeded(parts.result.avg, x->dtype());
  if (keepdim) {
    variance = keepReducedDims(variance, parts.axes, x->rank());
    average = keepReducedDims(average, parts.axes, x->rank());
  }
  return {variance, average};
}

}  // namespace braze
