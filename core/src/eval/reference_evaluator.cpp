#include "braze/eval/reference_evaluator.h"

#include <algorithm>

#include "braze/ops/elementwise_semantics.h"
#include "eval/eval_tensor.h"

namespace braze {

namespace {

using eval_detail::EvalContext;
using eval_detail::EvalTensor;

std::vector<EvalTensor> evaluateTensorExpr(const Expr& expr, EvalContext& context) {
  if (isElementwise(expr.op())) return eval_detail::evaluateElementwiseExpr(expr, context);
  switch (expr.op()) {
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
      return eval_detail::evaluateReductionExpr(expr, context);
    case OpKind::Welford:
      return eval_detail::evaluateWelfordExpr(expr, context);
    case OpKind::Cumsum:
    case OpKind::Cumprod:
    case OpKind::Cummax:
    case OpKind::Cummin:
      return eval_detail::evaluateScanExpr(expr, context);
    case OpKind::Broadcast:
    case OpKind::Expand:
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::Squeeze:
    case OpKind::Slice:
    case OpKind::Pad:
    case OpKind::Cat:
      return eval_detail::evaluateShapeExpr(expr, context);
    case OpKind::Select:
    case OpKind::IndexSelect:
    case OpKind::Gather:
    case OpKind::Scatter:
      return eval_detail::evaluateIndexingExpr(expr, context);
    case OpKind::Full:
    case OpKind::Iota:
    case OpKind::Uniform:
    case OpKind::Normal:
      return eval_detail::evaluateFactoryExpr(expr, context);
    case OpKind::Matmul:
    case OpKind::Linear:
      return eval_detail::evaluateContractionExpr(expr, context);
    case OpKind::Set:
    case OpKind::SegmentSet:
    case OpKind::StrideOrder:
      // A copy between memory types (or kernels, or layouts: the output's layout is applied
      // when it is exported); values are immutable here, so the view is shared.
      return {context.tensor(expr.input(0))};
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << "the reference evaluator has no rule for "
                              << eval_detail::exprLabel(expr);
}

// The computed shape must be the one the IR promises: lowering trusts the extents, so a
// disagreement here would make the oracle and the kernels compute different things.
void checkShape(const Expr& expr, const TensorView& tv, const EvalTensor& value,
                ExpressionEvaluator& scalars) {
  const std::vector<IterDomain*> dims = tv.logicalNoReductions();
  BRAZE_INTERNAL_CHECK(dims.size() == value.sizes.size())
      << eval_detail::exprLabel(expr) << ": " << tv.name() << " has rank " << dims.size()
      << " but its value has shape " << eval_detail::formatSizes(value.sizes);
  for (size_t d = 0; d < dims.size(); ++d) {
    const Scalar* extent = dims[d]->logicalExtent();
    const std::optional<ScalarValue> expected = scalars.evaluate(extent);
    BRAZE_USER_CHECK(!expected.has_value() || toInt64(*expected) == value.sizes[d])
        << expr.op() << ": dim " << d << " of " << tv.name() << " has size " << value.sizes[d]
        << " but its extent " << extent->name() << " evaluates to " << toInt64(*expected) << ", in "
        << eval_detail::exprLabel(expr);
  }
}

ScalarValue scalarOutput(const Val& output, size_t position, ExpressionEvaluator& scalars) {
  ScalarValue value =
      castScalar(scalars.evaluateOrThrow(&output, "fusion output " + std::to_string(position)),
                 output.dtype());
  if (auto* d = std::get_if<double>(&value)) *d = roundToPrecision(*d, output.dtype());
  return value;
}

}  // namespace

std::vector<EvaluatorArgument> evaluateFusion(const Fusion& fusion,
                                              const std::vector<EvaluatorArgument>& arguments) {
  ExpressionEvaluator scalars;
  EvalContext context(fusion, scalars);
  eval_detail::bindArguments(fusion, arguments, context);

  const std::vector<Expr*> exprs = fusion.exprs();
  // Intermediates are dropped after their last use, so a long fusion holds only live values.
  std::vector<int64_t> remaining_uses(static_cast<size_t>(fusion.numStatements()), 0);
  for (const Expr* expr : exprs) {
    for (const Val* input : expr->inputs()) {
      if (input->isA<TensorView>()) ++remaining_uses[static_cast<size_t>(input->id())];
    }
  }

  for (const Expr* expr : exprs) {
    const bool has_tensor_output = std::any_of(expr->outputs().begin(), expr->outputs().end(),
                                               [](const Val* v) { return v->isA<TensorView>(); });
    // Scalar exprs are evaluated on demand by the ExpressionEvaluator.
    if (!has_tensor_output) continue;
    std::vector<EvalTensor> values = evaluateTensorExpr(*expr, context);
    BRAZE_INTERNAL_CHECK(values.size() == expr->outputs().size())
        << eval_detail::exprLabel(*expr) << " produced " << values.size() << " values for "
        << expr->outputs().size() << " outputs";
    for (size_t k = 0; k < values.size(); ++k) {
      const auto& tv = *expr->output(k)->as<TensorView>();
      checkShape(*expr, tv, values[k], scalars);
      context.setTensor(&tv, eval_detail::convertedTo(values[k], eval_detail::heldOf(tv.dtype())));
    }
    for (const Val* input : expr->inputs()) {
      if (!input->isA<TensorView>()) continue;
      if (--remaining_uses[static_cast<size_t>(input->id())] == 0 && !fusion.isOutput(input)) {
        context.releaseTensor(input);
      }
    }
  }

  std::vector<EvaluatorArgument> results;
  results.reserve(fusion.outputs().size());
  for (size_t i = 0; i < fusion.outputs().size(); ++i) {
    const Val& output = *fusion.outputs()[i];
    if (const auto* tv = output.dynCast<TensorView>()) {
      // A computed output keeps the layout stride_order gave it; inputs come back dense.
      const std::vector<int64_t> layout =
          fusion.isInput(tv) ? std::vector<int64_t>{} : tv->allocationOrder();
      results.emplace_back(eval_detail::exportHostTensor(context.tensor(tv), tv->dtype(), layout));
    } else {
      results.emplace_back(scalarOutput(output, i, scalars));
    }
  }
  return results;
}

std::vector<HostTensor> evaluateFusionTensors(const Fusion& fusion,
                                              const std::vector<HostTensor>& inputs) {
  std::vector<EvaluatorArgument> arguments(inputs.begin(), inputs.end());
  std::vector<EvaluatorArgument> results = evaluateFusion(fusion, arguments);
  std::vector<HostTensor> tensors;
  tensors.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    auto* tensor = std::get_if<HostTensor>(&results[i]);
    BRAZE_USER_CHECK(tensor != nullptr)
        << "evaluateFusionTensors: output " << i << " (" << fusion.outputs()[i]->name()
        << ") is a scalar; use evaluateFusion for fusions with scalar outputs";
    tensors.push_back(std::move(*tensor));
  }
  return tensors;
}

}  // namespace braze
