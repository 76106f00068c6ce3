// Select, IndexSelect (an index of any rank: take), Gather and Scatter. Indices may be negative
// (counted from the end); an index out of range is reported with the op, where the index was found
// and its value.

#include "eval/eval_tensor.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

namespace {

const TensorView& tensorInput(const Expr& expr, size_t i) {
  return *expr.input(i)->as<TensorView>();
}

// " (s3)" for a symbolic index, nothing for a constant (whose name is its value).
std::string indexName(const Val& index) {
  const auto* scalar = index.dynCast<Scalar>();
  if (scalar != nullptr && scalar->isConstant()) return "";
  return " (" + index.name() + ")";
}

// `index` normalized into [0, size), or nullopt when out of range.
std::optional<int64_t> normalizeIndex(int64_t index, int64_t size) {
  const int64_t normalized = index < 0 ? index + size : index;
  if (normalized < 0 || normalized >= size) return std::nullopt;
  return normalized;
}

std::string validRange(int64_t size) {
  if (size == 0) return "the dim is empty, so no index is valid";
  return "valid indices are " + std::to_string(-size) + " .. " + std::to_string(size - 1);
}

// The multi-index of row-major position `position` in `sizes`.
std::vector<int64_t> unravel(int64_t position, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> index(sizes.size(), 0);
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = position % sizes[d];
    position /= sizes[d];
  }
  return index;
}

EvalTensor evaluateSelect(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
  BRAZE_INTERNAL_CHECK(dim < x.sizes.size()) << exprLabel(expr) << ": dim is out of range";
  const int64_t index = toInt64(context.scalar(expr.input(1), "the index of " + exprLabel(expr)));
  const std::optional<int64_t> position = normalizeIndex(index, x.sizes[dim]);
  BRAZE_USER_CHECK(position.has_value())
      << "select: index " << index << indexName(*expr.input(1)) << " is out of range for dim "
      << dim << " of " << tensorLabel(tensorInput(expr, 0)) << ", which has size " << x.sizes[dim]
      << ", in " << exprLabel(expr) << "; " << validRange(x.sizes[dim]);
  EvalTensor y = x;
  y.offset += *position * x.strides[dim];
  y.sizes.erase(y.sizes.begin() + static_cast<std::ptrdiff_t>(dim));
  y.strides.erase(y.strides.begin() + static_cast<std::ptrdiff_t>(dim));
  return y;
}

// index_select, and take with an index of any rank: x's dim `dim` is replaced by the index's
// dims. The output is written through a view whose index dims are merged into one (it is
// contiguous), one slab of x per index element.
EvalTensor evaluateIndexSelect(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const EvalTensor index = convertedTo(context.tensor(expr.input(1)), Held::Int);
  const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
  BRAZE_INTERNAL_CHECK(dim < x.sizes.size()) << exprLabel(expr) << ": dim is out of range";
  const int64_t size = x.sizes[dim];
  const size_t index_rank = index.sizes.size();
  std::vector<int64_t> sizes(x.sizes.begin(), x.sizes.begin() + static_cast<std::ptrdiff_t>(dim));
  sizes.insert(sizes.end(), index.sizes.begin(), index.sizes.end());
  sizes.insert(sizes.end(), x.sizes.begin() + static_cast<std::ptrdiff_t>(dim) + 1, x.sizes.end());
  EvalTensor y = EvalTensor::allocate(x.held, sizes);

  EvalTensor rows = y;  // y with the index dims merged into one at `dim`
  const auto first = rows.sizes.begin() + static_cast<std::ptrdiff_t>(dim);
  const int64_t merged_stride = index_rank == 0 ? 0 : y.strides[dim + index_rank - 1];
  rows.sizes.erase(first, first + static_cast<std::ptrdiff_t>(index_rank));
  rows.sizes.insert(rows.sizes.begin() + static_cast<std::ptrdiff_t>(dim), index.numel());
  const auto first_stride = rows.strides.begin() + static_cast<std::ptrdiff_t>(dim);
  rows.strides.erase(first_stride, first_stride + static_cast<std::ptrdiff_t>(index_rank));
  rows.strides.insert(rows.strides.begin() + static_cast<std::ptrdiff_t>(dim), merged_stride);

  // One slab of a tensor (dim removed) per position along `dim`.
  auto slab = [dim](EvalTensor view, int64_t position) {
    view.offset += position * view.strides[dim];
    view.sizes.erase(view.sizes.begin() + static_cast<std::ptrdiff_t>(dim));
    view.strides.erase(view.strides.begin() + static_cast<std::ptrdiff_t>(dim));
    return view;
  };
  for (int64_t i = 0; i < index.numel(); ++i) {
    const std::vector<int64_t> at = unravel(i, index.sizes);
    int64_t element = index.offset;
    for (size_t d = 0; d < index_rank; ++d) element += at[d] * index.strides[d];
    const int64_t value = index.data<int64_t>()[element];
    const std::optional<int64_t> position = normalizeIndex(value, size);
    BRAZE_USER_CHECK(position.has_value())
        << "index_select: " << tensorLabel(tensorInput(expr, 1)) << " holds " << value
        << " at position " << (index_rank == 1 ? std::to_string(i) : formatSizes(at))
        << ", which is out of range for dim " << dim << " of " << tensorLabel(tensorInput(expr, 0))
        << " with size " << size << ", in " << exprLabel(expr) << "; " << validRange(size);
    copyInto(slab(x, *position), slab(rows, i));
  }
  return y;
}

EvalTensor evaluateGather(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const EvalTensor index = convertedTo(context.tensor(expr.input(1)), Held::Int);
  const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
  const size_t rank = x.sizes.size();
  BRAZE_INTERNAL_CHECK(dim < rank) << exprLabel(expr) << ": dim is out of range";
  BRAZE_USER_CHECK(index.sizes.size() == rank)
      << "gather: the index " << tensorLabel(tensorInput(expr, 1)) << " has rank " << index.rank()
      << " but " << tensorLabel(tensorInput(expr, 0)) << " has rank " << rank << ", in "
      << exprLabel(expr);

  // Along the other dims, x is read at the index's position; a size-1 dim of x repeats.
  std::vector<int64_t> x_strides(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    if (d == dim) continue;
    if (x.sizes[d] == 1) continue;
    BRAZE_USER_CHECK(index.sizes[d] <= x.sizes[d])
        << "gather: dim " << d << " of the index " << tensorLabel(tensorInput(expr, 1))
        << " has size " << index.sizes[d] << " but " << tensorLabel(tensorInput(expr, 0))
        << " has only " << x.sizes[d] << ", in " << exprLabel(expr);
    x_strides[d] = x.strides[d];
  }
  const int64_t size = x.sizes[dim];
  const int64_t dim_stride = x.strides[dim];
  EvalTensor y = EvalTensor::allocate(x.held, index.sizes);
  StridedOperands<3> walk;
  walk.sizes = index.sizes;
  walk.strides = {index.strides, x_strides, y.strides};
  walk.offsets = {index.offset, x.offset, 0};
  const int64_t* indices = index.data<int64_t>();
  visitHeld(x.held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    const T* from = x.data<T>();
    T* to = y.data<T>();
    walkStrided(walk, [&](const std::array<int64_t, 3>& at) {
      const int64_t value = indices[at[0]];
      const std::optional<int64_t> position = normalizeIndex(value, size);
      BRAZE_USER_CHECK(position.has_value())
          << "gather: " << tensorLabel(tensorInput(expr, 1)) << " holds " << value
          << " at position " << formatSizes(unravel(at[2], y.sizes))
          << ", which is out of range for dim " << dim << " of "
          << tensorLabel(tensorInput(expr, 0)) << " with size " << size << ", in "
          << exprLabel(expr) << "; " << validRange(size);
      to[at[2]] = from[at[1] + *position * dim_stride];
    });
  });
  return y;
}

// A copy of x, then src written at index's positions (the last write wins where they repeat).
EvalTensor evaluateScatter(const Expr& expr, EvalContext& context) {
  const EvalTensor& x = context.tensor(expr.input(0));
  const EvalTensor index = convertedTo(context.tensor(expr.input(1)), Held::Int);
  const EvalTensor src = convertedTo(context.tensor(expr.input(2)), x.held);
  const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
  const size_t rank = x.sizes.size();
  BRAZE_INTERNAL_CHECK(dim < rank) << exprLabel(expr) << ": dim is out of range";
  BRAZE_USER_CHECK(index.sizes.size() == rank && src.sizes.size() == rank)
      << "scatter: the index " << tensorLabel(tensorInput(expr, 1)) << " and src "
      << tensorLabel(tensorInput(expr, 2)) << " must have the rank of "
      << tensorLabel(tensorInput(expr, 0)) << " (" << rank << "), in " << exprLabel(expr);
  for (size_t d = 0; d < rank; ++d) {
    BRAZE_USER_CHECK(index.sizes[d] <= src.sizes[d] && (d == dim || index.sizes[d] <= x.sizes[d]))
        << "scatter: dim " << d << " of the index " << tensorLabel(tensorInput(expr, 1))
        << " has size " << index.sizes[d] << " but src has " << src.sizes[d] << " and the input "
        << x.sizes[d] << "; the index may be no larger than src, nor than "
        << "the input except along dim " << dim << ", in " << exprLabel(expr);
  }
  EvalTensor y = EvalTensor::allocate(x.held, x.sizes);
  copyInto(x, y);
  const int64_t size = x.sizes[dim];
  std::vector<int64_t> y_strides = y.strides;
  y_strides[dim] = 0;  // the index's value gives the position along dim
  StridedOperands<3> walk;
  walk.sizes = index.sizes;
  walk.strides = {index.strides, src.strides, y_strides};
  walk.offsets = {index.offset, src.offset, 0};
  const int64_t* indices = index.data<int64_t>();
  visitHeld(x.held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    const T* from = src.data<T>();
    T* to = y.data<T>();
    walkStrided(walk, [&](const std::array<int64_t, 3>& at) {
      const int64_t value = indices[at[0]];
      const std::optional<int64_t> position = normalizeIndex(value, size);
      BRAZE_USER_CHECK(position.has_value())
          << "scatter: " << tensorLabel(tensorInput(expr, 1)) << " holds " << value
          << ", which is out of range for dim " << dim << " of "
          << tensorLabel(tensorInput(expr, 0)) << " with size " << size << ", in "
          << exprLabel(expr) << "; " << validRange(size);
      to[at[2] + *position * y.strides[dim]] = from[at[1]];
    });
  });
  return y;
}

}  // namespace

std::vector<EvalTensor> evaluateIndexingExpr(const Expr& expr, EvalContext& context) {
  switch (expr.op()) {
    case OpKind::Select:
      return {evaluateSelect(expr, context)};
    case OpKind::IndexSelect:
      return {evaluateIndexSelect(expr, context)};
    case OpKind::Gather:
      return {evaluateGather(expr, context)};
    case OpKind::Scatter:
      return {evaluateScatter(expr, context)};
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << exprLabel(expr) << " is not an indexing op";
}

}  // namespace braze::eval_detail
