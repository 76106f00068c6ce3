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

// For a gather along `d` of `t` that gives it extent `target` there: iota(target) clamped to
// the last of `available` entries, expanded to t's other extents.
TensorView* positionsAlong(Fusion& fusion, TensorView* t, size_t d, Scalar* target,
                           Scalar* available) {
  const std::vector<IterDomain*> dims = t->logicalNoReductions();
  TensorView* at = iota(fusion, target, int64_t{0}, int64_t{1}, DataType::Int64);
  at = minimum(at, sub(cast(Operand(available), DataType::Int64), int64_t{1}));
  std::vector<bool> flags(dims.size(), true);
  flags[d] = false;
  std::vector<Operand> sizes;
  for (size_t e = 0; e < dims.size(); ++e)
    sizes.emplace_back(e == d ? Operand(target) : Operand(dims[e]->logicalExtent()));
  return expand(broadcast(at, flags), sizes);
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

  // positions: index with negative entries counted from the end, widened to x's extents
  // outside `dim` with -1 (no match); values: src cut or widened to the same extents.
  // Reading past an extent goes through a gather clamped to the last entry and masked,
  // since the schedulers take gathers but not pads or slices.
  TensorView* positions =
      where(lt(index, int64_t{0}), add(index, cast(Operand(length), index_type)), index);
  TensorView* values = src;
  for (size_t d = 0; d < rank; ++d) {
    Scalar* entries = index_dims[d]->logicalExtent();
    Scalar* target = d == dim ? entries : x_dims[d]->logicalExtent();
    const bool widened = !sameExtent(target, entries) && !scatterAssumesEqual(entries, target);
    if (widened) {
      TensorView* at = positionsAlong(fusion, positions, d, target, entries);
      TensorView* inside = lt(iotaAt(fusion, target, d, rank, DataType::Int64),
                              cast(Operand(entries), DataType::Int64));
      positions = where(inside, gather(positions, static_cast<int64_t>(d), at), int64_t{-1});
    }
    Scalar* available = src_dims[d]->logicalExtent();
    if (!sameExtent(target, available) && (widened || !scatterAssumesEqual(entries, available))) {
      TensorView* at = positionsAlong(fusion, values, d, target, available);
      values = gather(values, static_cast<int64_t>(d), at);
    }
  }

  // Dims of rank + 1: m (index's entries along dim) at `dim`, j (y's positions) after it.
  const size_t m_at = dim;
  const size_t j_at = dim + 1;
  TensorView* j = iotaAt(fusion, length, j_at, rank + 1, index_type);
  TensorView* m = iotaAt(fusion, index_dims[dim]->logicalExtent(), m_at, rank + 1, index_type);
  TensorView* match = eq(withBroadcastAt(positions, j_at), j);
  TensorView* last = amax(where(match, m, int64_t{-1}), {static_cast<int64_t>(m_at)});
  TensorView* chosen = eq(m, withBroadcastAt(last, m_at));
  TensorView* picked = cast(
      sum(where(chosen, withBroadcastAt(values, j_at), int64_t{0}), {static_cast<int64_t>(m_at)}),
      x->dtype());
  return where(ge(last, int64_t{0}), picked, x);
}

}  // namespace

bool scatterAssumesEqual(const Scalar* a, const Scalar* b) {
  return a != b && !(a->isConstant() && b->isConstant());
}

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
