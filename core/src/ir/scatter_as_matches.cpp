#include "braze/ir/scatter_as_matches.h"

#include <limits>
#include <vector>

#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "ir/replace_tensor.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

bool sameExtent(const Scalar* a, const Scalar* b) {
  if (a == b) return true;
  const std::optional<int64_t> x = a->constantInt();
  const std::optional<int64_t> y = b->constantInt();
  return x && y && *x == *y;
}

// `t` with a new broadcast dim at `position` (rank + 1 dims).
TensorView* withBroadcastAt(TensorView* t, size_t position) {
  std::vector<bool> flags(static_cast<size_t>(t->rank()) + 1, false);
  flags[position] = true;
  return broadcast(t, flags);
}

// A 1-D iota of `length` placed at `position` of a tensor of `rank` dims.
TensorView* iotaAt(Fusion& fusion, Scalar* length, size_t position, size_t rank, DataType dtype) {
  std::vector<bool> flags(rank, true);
  flags[position] = false;
  return broadcast(iota(fusion, length, int64_t{0}, int64_t{1}, dtype), flags);
}

TensorView* rewrite(Fusion& fusion, const Expr& scatter) {
  auto* x = scatter.input(0)->as<TensorView>();
  auto* index = scatter.input(1)->as<TensorView>();
  auto* src = scatter.input(2)->as<TensorView>();
  const auto dim = static_cast<size_t>(scatter.attribute<int64_t>("dim"));
  const std::vector<IterDomain*> x_dims = x->logicalNoReductions();
  const std::vector<IterDomain*> index_dims = index->logicalNoReductions();
  const std::vector<IterDomain*> src_dims = src->logicalNoReductions();
  const size_t rank = x_dims.size();
  Scalar* length = x_dims[dim]->logicalExtent();
  const DataType index_type = index->dtype();

  // src cut to index's extents; both padded to x's extents outside `dim`.
  std::vector<SliceRange> cuts(rank);
  bool cut = false;
  for (size_t d = 0; d < rank; ++d) {
    if (sameExtent(src_dims[d]->logicalExtent(), index_dims[d]->logicalExtent())) continue;
    cuts[d].stop = Operand(index_dims[d]->logicalExtent());
    cut = true;
  }
  TensorView* values = cut ? slice(src, cuts) : src;
  TensorView* positions =
      where(lt(index, int64_t{0}), add(index, cast(Operand(length), index_type)), index);
  std::vector<Operand> widths;  // torch order: (left, right) from the last dim
  bool padded = false;
  for (size_t d = rank; d-- > 0;) {
    widths.emplace_back(int64_t{0});
    if (d == dim || sameExtent(x_dims[d]->logicalExtent(), index_dims[d]->logicalExtent())) {
      widths.emplace_back(int64_t{0});
      continue;
    }
    widths.emplace_back(
        ops_detail::subExtents(x_dims[d]->logicalExtent(), index_dims[d]->logicalExtent()));
    padded = true;
  }
  if (padded) {
    positions = pad(positions, widths, int64_t{-1});
    values = pad(values, widths, int64_t{0});
  }

  // Dims of rank + 1: m (index's entries along dim) at `dim`, j (y's positions) after it.
  const size_t m_at = dim;
  const size_t j_at = dim + 1;
  TensorView* j = iotaAt(fusion, length, j_at, rank + 1, index_type);
  TensorView* m = iotaAt(fusion, index_dims[dim]->logicalExtent(), m_at, rank + 1, index_type);
  TensorView* match = eq(withBroadcastAt(positions, j_at), j);
  TensorView* last = amax(where(match, m, int64_t{-1}), {static_cast<int64_t>(m_at)});
  TensorView* chosen = eq(m, withBroadcastAt(last, m_at));
  TensorView* picked =
      cast(sum(where(chosen, withBroadcastAt(values, j_at), int64_t{0}),
               {static_cast<int64_t>(m_at)}),
           x->dtype());
  return where(ge(last, int64_t{0}), picked, x);
}

}  // namespace

int64_t scattersAsMatches(Fusion& fusion) {
  int64_t rewritten = 0;
  for (Expr* expr : fusion.exprs()) {
    if (expr->op() != OpKind::Scatter) continue;
    TensorView* replacement = rewrite(fusion, *expr);
    ir_detail::replaceTensorEverywhere(fusion, expr->output(0)->as<TensorView>(), replacement);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace braze
