// Cumsum, Cumprod, Cummax and Cummin along the "dim" attribute. Each line along dim is walked
// from its first element, accumulating in the output's category (double, int64 wrapping, bool)
// with the combine of the scan's reduction, and every prefix is stored.

#include "eval/accumulation.h"
#include "eval/eval_tensor.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

std::vector<EvalTensor> evaluateScanExpr(const Expr& expr, EvalContext& context) {
  const auto& y = *expr.output(0)->as<TensorView>();
  const DataType out_dtype = y.dtype();
  const Held held = heldOf(out_dtype);
  const EvalTensor x = convertedTo(context.tensor(expr.input(0)), held);
  const int64_t dim = expr.attribute<int64_t>("dim");
  BRAZE_INTERNAL_CHECK(dim >= 0 && dim < x.rank())
      << exprLabel(expr) << ": dim " << dim << " is out of range for rank " << x.rank();
  const std::optional<OpKind> op = scanCombiner(expr.op());
  BRAZE_INTERNAL_CHECK(op.has_value()) << exprLabel(expr) << " is not a scan";

  // An expanded broadcast input keeps stride 0 along dim: its prefixes still grow.
  std::vector<int64_t> sizes = context.extentsOf(y);
  EvalTensor out = EvalTensor::allocate(held, sizes);
  const auto d = static_cast<size_t>(dim);
  const int64_t length = sizes[d];
  const int64_t in_step = x.sizes[d] == 1 ? 0 : x.strides[d];
  const int64_t out_step = out.strides[d];
  // Every line's first element, row-major over the other dims.
  StridedOperands<2> lines;
  lines.sizes = sizes;
  lines.sizes[d] = 1;
  lines.strides = {x.strides, out.strides};
  lines.offsets = {x.offset, out.offset};
  if (length == 0) return {std::move(out)};
  visitHeld(held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    const T* in = x.data<T>();
    T* result = out.data<T>();
    walkStrided(lines, [&](const std::array<int64_t, 2>& at) {
      T acc = identityOf<T>(*op, out_dtype);
      for (int64_t k = 0; k < length; ++k) {
        acc = combine<T>(*op, acc, in[at[0] + k * in_step]);
        result[at[1] + k * out_step] = acc;
      }
    });
  });
  return {std::move(out)};
}

}  // namespace braze::eval_detail
