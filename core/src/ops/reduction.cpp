// sum, prod, max, min, amax, amin, mean. Each reduction Expr reads and writes one dtype; the
// dtype rules (int64 sums, float32 accumulation of float16/bfloat16) are casts around it:
//
//   sum(x: float16[s0, s1], {1})  ->  T1 = cast(T0, float32); T2 = sum(T1, axes=[1]);
//                                     T3 = cast(T2, float16)

#include "braze/ops/reduction.h"

#include "braze/ops/elementwise.h"
#include "ops/domain_builder.h"
#include "ops/reduction_output.h"

namespace braze {

namespace {

using ops_detail::accumulatingResultType;
using ops_detail::accumulationType;
using ops_detail::castIfNeeded;
using ops_detail::keepReducedDims;
using ops_detail::normalizeReductionAxes;
using ops_detail::reduceOver;

void checkInput(std::string_view op, const TensorView* x) {
  BRAZE_USER_CHECK(x != nullptr) << op << ": the input tensor is null";
}

// x cast to the accumulation type, reduced, cast to `result`, keepdim applied.
TensorView* accumulate(OpKind op, std::string_view name, TensorView* x,
                       const std::vector<int64_t>& axes, bool keepdim, DataType result) {
  const std::vector<int64_t> normalized = normalizeReductionAxes(name, x, axes);
  const DataType accumulation = accumulationType(result);
  TensorView* y = reduceOver(op, castIfNeeded(x, accumulation), normalized);
  y = castIfNeeded(y, result);
  return keepdim ? keepReducedDims(y, normalized, x->rank()) : y;
}

// max and min select an element, so they are exact in any dtype and need no casts.
TensorView* reduceBySelection(OpKind op, std::string_view name, TensorView* x,
                              const std::vector<int64_t>& axes, bool keepdim) {
  checkInput(name, x);
  const std::vector<int64_t> normalized = normalizeReductionAxes(name, x, axes);
  TensorView* y = reduceOver(op, x, normalized);
  return keepdim ? keepReducedDims(y, normalized, x->rank()) : y;
}

}  // namespace

TensorView* sum(TensorView* x, std::vector<int64_t> axes, bool keepdim,
                std::optional<DataType> dtype) {
  checkInput("sum", x);
  return accumulate(OpKind::Sum, "sum", x, axes, keepdim, accumulatingResultType("sum", x, dtype));
}

TensorView* prod(TensorView* x, std::vector<int64_t> axes, bool keepdim,
                 std::optional<DataType> dtype) {
  checkInput("prod", x);
  return accumulate(OpKind::Prod, "prod", x, axes, keepdim,
                    accumulatingResultType("prod", x, dtype));
}

TensorView* max(TensorView* x, std::vector<int64_t> axes, bool keepdim) {
  return reduceBySelection(OpKind::Max, "max", x, axes, keepdim);
}

TensorView* min(TensorView* x, std::vector<int64_t> axes, bool keepdim) {
  return reduceBySelection(OpKind::Min, "min", x, axes, keepdim);
}

TensorView* amax(TensorView* x, std::vector<int64_t> axes, bool keepdim) {
  return reduceBySelection(OpKind::Max, "amax", x, axes, keepdim);
}

TensorView* amin(TensorView* x, std::vector<int64_t> axes, bool keepdim) {
  return reduceBySelection(OpKind::Min, "amin", x, axes, keepdim);
}

TensorView* mean(TensorView* x, std::vector<int64_t> axes, bool keepdim,
                 std::optional<DataType> dtype) {
  checkInput("mean", x);
  const DataType result = dtype.value_or(x->dtype());
  BRAZE_USER_CHECK(dtype || isFloatingPoint(x->dtype()))
      << "mean of " << ops_detail::tensorLabel(x) << ": the input has dtype " << x->dtype()
      << " and no floating result dtype can be inferred; cast the input to a floating dtype or "
         "pass dtype= (for example float32)";
  BRAZE_USER_CHECK(isFloatingPoint(result))
      << "mean of " << ops_detail::tensorLabel(x) << ": dtype=" << result
      << " is not a floating dtype; use float16, bfloat16, float32 or float64";
  const std::vector<int64_t> normalized = normalizeReductionAxes("mean", x, axes);
  const DataType accumulation = accumulationType(result);
  TensorView* total = reduceOver(OpKind::Sum, castIfNeeded(x, accumulation), normalized);
  // An empty reduction divides 0 by 0 and gives nan, as in PyTorch.
  TensorView* y = div(total, ops_detail::reducedElementCount(x, normalized));
  y = castIfNeeded(y, result);
  return keepdim ? keepReducedDims(y, normalized, x->rank()) : y;
}

}  // namespace braze
