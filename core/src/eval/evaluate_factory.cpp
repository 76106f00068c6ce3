// Full, Iota, Uniform and Normal: tensors made from scalars, whose shapes come from their
// output's extents.

#include "braze/ops/elementwise_semantics.h"
#include "eval/eval_tensor.h"
#include "eval/philox_random.h"

namespace braze::eval_detail {

namespace {

EvalTensor evaluateFull(const Expr& expr, EvalContext& context) {
  const auto& out = *expr.output(0)->as<TensorView>();
  const ScalarValue value = context.scalar(expr.input(0), "the value of " + exprLabel(expr));
  return EvalTensor::filled(heldOf(out.dtype()), context.extentsOf(out), value);
}

EvalTensor evaluateIota(const Expr& expr, EvalContext& context) {
  const auto& out = *expr.output(0)->as<TensorView>();
  const std::vector<int64_t> sizes = context.extentsOf(out);
  BRAZE_INTERNAL_CHECK(sizes.size() == 1) << exprLabel(expr) << ": iota is 1-D";
  const DataType dtype = out.dtype();
  const ScalarValue start =
      castScalar(context.scalar(expr.input(0), "the start of " + exprLabel(expr)), dtype);
  const ScalarValue step =
      castScalar(context.scalar(expr.input(1), "the step of " + exprLabel(expr)), dtype);
  EvalTensor y = EvalTensor::allocate(heldOf(dtype), sizes);
  const int64_t length = sizes[0];
  switch (y.held) {
    case Held::Float: {
      // start + i * step for each i, as torch.arange, rather than a running sum that would
      // accumulate rounding errors.
      const double first = std::get<double>(start);
      const double delta = std::get<double>(step);
      for (int64_t i = 0; i < length; ++i) {
        y.data<double>()[i] = first + static_cast<double>(i) * delta;
      }
      break;
    }
    case Held::Int: {
      const auto first = static_cast<uint64_t>(std::get<int64_t>(start));
      const auto delta = static_cast<uint64_t>(std::get<int64_t>(step));
      for (int64_t i = 0; i < length; ++i) {
        y.data<int64_t>()[i] = static_cast<int64_t>(first + static_cast<uint64_t>(i) * delta);
      }
      break;
    }
    case Held::Bool:
      BRAZE_USER_CHECK(false) << "iota: " << out.name() << " has dtype bool, in " << exprLabel(expr)
                              << "; use an integer or floating dtype";
  }
  return y;
}

// Element k of a uniform or normal tensor from (seed, offset, k), in the output's row-major
// order, rounded once to the output's dtype (as the kernel's store does).
EvalTensor evaluateRandom(const Expr& expr, EvalContext& context) {
  const auto& out = *expr.output(0)->as<TensorView>();
  const DataType dtype = out.dtype();
  const bool uniform = expr.op() == OpKind::Uniform;
  auto parameter = [&](size_t i, std::string_view what) {
    return toDouble(context.scalar(expr.input(i), std::string(what) + " of " + exprLabel(expr)));
  };
  const double first = parameter(0, uniform ? "the minval" : "the mean");
  const double second = parameter(1, uniform ? "the maxval" : "the std");
  const int64_t seed = toInt64(context.scalar(expr.input(2), "the rng_seed of " + exprLabel(expr)));
  const int64_t offset =
      toInt64(context.scalar(expr.input(3), "the rng_offset of " + exprLabel(expr)));
  const std::vector<int64_t> sizes = context.extentsOf(out);
  EvalTensor y = EvalTensor::allocate(heldOf(dtype), sizes);
  BRAZE_INTERNAL_CHECK(y.held == Held::Float) << exprLabel(expr) << ": random tensors are floating";
  int64_t count = 1;
  for (int64_t size : sizes) count *= size;
  double* values = y.data<double>();
  for (int64_t k = 0; k < count; ++k) {
    double value = 0.0;
    if (dtype == DataType::Float64) {
      value = uniform ? uniformDouble(seed, offset, k, first, second)
                      : normalDouble(seed, offset, k, first, second);
    } else {
      const auto a = static_cast<float>(first);
      const auto b = static_cast<float>(second);
      value = uniform ? uniformFloat(seed, offset, k, a, b) : normalFloat(seed, offset, k, a, b);
    }
    values[k] = roundToPrecision(value, dtype);
  }
  return y;
}

}  // namespace

std::vector<EvalTensor> evaluateFactoryExpr(const Expr& expr, EvalContext& context) {
  switch (expr.op()) {
    case OpKind::Full:
      return {evaluateFull(expr, context)};
    case OpKind::Iota:
      return {evaluateIota(expr, context)};
    case OpKind::Uniform:
    case OpKind::Normal:
      return {evaluateRandom(expr, context)};
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << exprLabel(expr) << " is not a factory op";
}

}  // namespace braze::eval_detail
