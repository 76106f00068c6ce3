// Broadcast, Expand, Reshape, Permute, Squeeze, Slice, Pad and Cat. Most are views of their
// input (new sizes and strides over the same storage); Reshape, Pad and Cat copy.

#include "eval/eval_tensor.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

namespace {

const TensorView& outputOf(const Expr& expr) {
  return *expr.output(0)->as<TensorView>();
}
const TensorView& inputOf(const Expr& expr, size_t i) {
  return *expr.input(i)->as<TensorView>();
}

EvalTensor evaluateBroadcast(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const auto& flags = expr.attribute<std::vector<bool>>("flags");
  EvalTensor y = x;
  y.sizes.clear();
  y.strides.clear();
  size_t next = 0;
  for (bool is_new : flags) {
    if (is_new) {
      y.sizes.push_back(1);
      y.strides.push_back(0);
      continue;
    }
    BRAZE_INTERNAL_CHECK(next < x.sizes.size())
        << exprLabel(expr) << ": flags keep more dims than the input has";
    y.sizes.push_back(x.sizes[next]);
    y.strides.push_back(x.strides[next]);
    ++next;
  }
  BRAZE_INTERNAL_CHECK(next == x.sizes.size())
      << exprLabel(expr) << ": flags keep " << next << " dims of an input of rank " << x.rank();
  return y;
}

EvalTensor evaluateExpand(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const std::vector<int64_t> sizes = context.extentsOf(outputOf(expr));
  BRAZE_INTERNAL_CHECK(sizes.size() == x.sizes.size())
      << exprLabel(expr) << ": ranks of input and output differ";
  EvalTensor y = x;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (x.sizes[d] == sizes[d]) continue;
    BRAZE_USER_CHECK(x.sizes[d] == 1)
        << "expand: dim " << d << " of " << tensorLabel(inputOf(expr, 0)) << " has size "
        << x.sizes[d] << " but " << outputOf(expr).name() << " expects size " << sizes[d] << ", in "
        << exprLabel(expr) << "; only size-1 dims can be expanded";
    y.sizes[d] = sizes[d];
    y.strides[d] = 0;
  }
  return y;
}

EvalTensor evaluateReshape(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const std::vector<int64_t> sizes = context.extentsOf(outputOf(expr));
  EvalTensor y = materialize(x, x.held);
  y.sizes = sizes;
  y.strides = contiguousStrides(sizes);
  BRAZE_USER_CHECK(y.numel() == x.numel())
      << "reshape: " << tensorLabel(inputOf(expr, 0)) << " of shape " << formatSizes(x.sizes)
      << " has " << x.numel() << " elements but the requested shape " << formatSizes(sizes)
      << " of " << outputOf(expr).name() << " has " << y.numel() << ", in " << exprLabel(expr);
  return y;
}

EvalTensor evaluatePermute(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const auto& perm = expr.attribute<std::vector<int64_t>>("perm");
  BRAZE_INTERNAL_CHECK(perm.size() == x.sizes.size())
      << exprLabel(expr) << ": perm has " << perm.size() << " entries for rank " << x.rank();
  EvalTensor y = x;
  for (size_t i = 0; i < perm.size(); ++i) {
    y.sizes[i] = x.sizes.at(static_cast<size_t>(perm[i]));
    y.strides[i] = x.strides.at(static_cast<size_t>(perm[i]));
  }
  return y;
}

EvalTensor evaluateSqueeze(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const auto& flags = expr.attribute<std::vector<bool>>("flags");
  BRAZE_INTERNAL_CHECK(flags.size() == x.sizes.size())
      << exprLabel(expr) << ": flags have " << flags.size() << " entries for rank " << x.rank();
  EvalTensor y = x;
  y.sizes.clear();
  y.strides.clear();
  for (size_t d = 0; d < flags.size(); ++d) {
    if (!flags[d]) {
      y.sizes.push_back(x.sizes[d]);
      y.strides.push_back(x.strides[d]);
      continue;
    }
    BRAZE_USER_CHECK(x.sizes[d] == 1)
        << "squeeze: dim " << d << " of " << tensorLabel(inputOf(expr, 0)) << " has size "
        << x.sizes[d] << ", in " << exprLabel(expr) << "; only size-1 dims can be squeezed";
  }
  return y;
}

EvalTensor evaluateSlice(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const std::vector<int64_t> counts = context.extentsOf(outputOf(expr));
  BRAZE_INTERNAL_CHECK(expr.inputs().size() == 1 + 2 * x.sizes.size() &&
                       counts.size() == x.sizes.size())
      << exprLabel(expr) << ": a slice of rank " << x.rank() << " needs " << 2 * x.rank()
      << " start/step scalars";
  EvalTensor y = x;
  for (size_t d = 0; d < x.sizes.size(); ++d) {
    const std::string where = " of dim " + std::to_string(d) + " in " + exprLabel(expr);
    const int64_t start = toInt64(context.scalar(expr.input(1 + 2 * d), "the start" + where));
    const int64_t step = toInt64(context.scalar(expr.input(2 + 2 * d), "the step" + where));
    BRAZE_USER_CHECK(step > 0) << "slice: step " << step << where << " must be positive";
    const int64_t last = start + (counts[d] - 1) * step;
    BRAZE_USER_CHECK(counts[d] == 0 || (start >= 0 && last < x.sizes[d]))
        << "slice: " << counts[d] << " elements from " << start << " by " << step << where
        << " reach past the size " << x.sizes[d] << " of " << tensorLabel(inputOf(expr, 0));
    y.sizes[d] = counts[d];
    if (counts[d] > 0) y.offset += start * x.strides[d];
    y.strides[d] = x.strides[d] * step;
  }
  return y;
}

// A view of the elements [start, start + count) along each dim.
EvalTensor window(EvalTensor view, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& counts) {
  for (size_t d = 0; d < counts.size(); ++d) {
    view.offset += starts[d] * view.strides[d];
    view.sizes[d] = counts[d];
  }
  return view;
}

EvalTensor evaluatePad(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const std::vector<int64_t> sizes = context.extentsOf(outputOf(expr));
  const size_t rank = x.sizes.size();
  BRAZE_INTERNAL_CHECK(expr.inputs().size() == 2 + 2 * rank && sizes.size() == rank)
      << exprLabel(expr) << ": a pad of rank " << rank << " needs a value and " << 2 * rank
      << " width scalars";
  const ScalarValue value = context.scalar(expr.input(1), "the value of " + exprLabel(expr));
  const Held held = heldOf(outputOf(expr).dtype());
  EvalTensor y = EvalTensor::filled(held, sizes, value);

  // The part of x that survives (negative widths crop) and where it lands in y.
  std::vector<int64_t> x_starts(rank), y_starts(rank), counts(rank);
  bool empty = false;
  for (size_t d = 0; d < rank; ++d) {
    const std::string where = " of dim " + std::to_string(d) + " in " + exprLabel(expr);
    const int64_t left = toInt64(context.scalar(expr.input(2 + 2 * d), "the left width" + where));
    const int64_t right = toInt64(context.scalar(expr.input(3 + 2 * d), "the right width" + where));
    BRAZE_USER_CHECK(x.sizes[d] + left + right == sizes[d])
        << "pad: dim " << d << " of " << tensorLabel(inputOf(expr, 0)) << " has size " << x.sizes[d]
        << ", padded by " << left << " and " << right << " it has size "
        << x.sizes[d] + left + right << ", but " << outputOf(expr).name() << " has size "
        << sizes[d] << ", in " << exprLabel(expr);
    const int64_t begin = std::max<int64_t>(left, 0);
    const int64_t end = std::min<int64_t>(sizes[d], left + x.sizes[d]);
    counts[d] = std::max<int64_t>(end - begin, 0);
    y_starts[d] = begin;
    x_starts[d] = begin - left;
    empty = empty || counts[d] == 0;
  }
  if (!empty) copyInto(window(x, x_starts, counts), window(y, y_starts, counts));
  return y;
}

EvalTensor evaluateCat(const Expr& expr, EvalContext& context) {
  const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
  const EvalTensor& first = context.tensor(expr.input(0));
  BRAZE_INTERNAL_CHECK(dim < first.sizes.size())
      << exprLabel(expr) << ": dim " << dim << " is out of range";
  std::vector<int64_t> sizes = first.sizes;
  sizes[dim] = 0;
  for (size_t i = 0; i < expr.inputs().size(); ++i) {
    const EvalTensor& x = context.tensor(expr.input(i));
    BRAZE_INTERNAL_CHECK(x.sizes.size() == sizes.size())
        << exprLabel(expr) << ": inputs have different ranks";
    for (size_t d = 0; d < sizes.size(); ++d) {
      BRAZE_USER_CHECK(d == dim || x.sizes[d] == first.sizes[d])
          << "cat: dim " << d << " of " << tensorLabel(inputOf(expr, i)) << " has size "
          << x.sizes[d] << " but " << tensorLabel(inputOf(expr, 0)) << " has size "
          << first.sizes[d] << ", in " << exprLabel(expr)
          << "; all inputs must agree on every dim but the cat dim " << dim;
    }
    sizes[dim] += x.sizes[dim];
  }
  EvalTensor y = EvalTensor::allocate(heldOf(outputOf(expr).dtype()), sizes);
  std::vector<int64_t> starts(sizes.size(), 0);
  for (size_t i = 0; i < expr.inputs().size(); ++i) {
    const EvalTensor& x = context.tensor(expr.input(i));
    if (x.numel() > 0) copyInto(x, window(y, starts, x.sizes));
    starts[dim] += x.sizes[dim];
  }
  return y;
}

}  // namespace

std::vector<EvalTensor> evaluateShapeExpr(const Expr& expr, EvalContext& context) {
  switch (expr.op()) {
    case OpKind::Broadcast:
      return {evaluateBroadcast(expr, context)};
    case OpKind::Expand:
      return {evaluateExpand(expr, context)};
    case OpKind::Reshape:
      return {evaluateReshape(expr, context)};
    case OpKind::Permute:
      return {evaluatePermute(expr, context)};
    case OpKind::Squeeze:
      return {evaluateSqueeze(expr, context)};
    case OpKind::Slice:
      return {evaluateSlice(expr, context)};
    case OpKind::Pad:
      return {evaluatePad(expr, context)};
    case OpKind::Cat:
      return {evaluateCat(expr, context)};
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << exprLabel(expr) << " is not a shape op";
}

}  // namespace braze::eval_detail
