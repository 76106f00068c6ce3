// Full and Iota: tensors made from scalars, whose shapes come from their output's extents.

#include "eval/eval_tensor.h"

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

}  // namespace

std::vector<EvalTensor> evaluateFactoryExpr(const Expr& expr, EvalContext& context) {
  switch (expr.op()) {
    case OpKind::Full:
      return {evaluateFull(expr, context)};
    case OpKind::Iota:
      return {evaluateIota(expr, context)};
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << exprLabel(expr) << " is not a factory op";
}

}  // namespace braze::eval_detail
