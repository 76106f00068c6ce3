#include "host/contraction_pairs.h"

namespace braze::host_detail {

std::vector<std::pair<const IterDomain*, const IterDomain*>> contractionPairs(const Expr& expr,
                                                                              size_t input) {
  std::vector<std::pair<const IterDomain*, const IterDomain*>> pairs;
  const auto* producer = expr.input(input)->dynCast<TensorView>();
  const auto* consumer = expr.output(0)->dynCast<TensorView>();
  if (producer == nullptr || consumer == nullptr) return pairs;
  const std::vector<IterDomain*> p = producer->logicalNoReductions();
  const std::vector<IterDomain*> c = consumer->logicalNoReductions();
  auto pair = [&](size_t from, size_t to) {
    if (from < p.size() && to < c.size() && !p[from]->isBroadcast() && !c[to]->isBroadcast())
      pairs.emplace_back(p[from], c[to]);
  };
  // p's dims [0, count) against c's dims ending at `end`, aligned from the right.
  auto alignedBatch = [&](size_t count, size_t end) {
    for (size_t d = 0; d < count && d < end; ++d) pair(count - 1 - d, end - 1 - d);
  };
  if (expr.op() == OpKind::Matmul) {
    const size_t a_rank = expr.input(0)->as<TensorView>()->logicalNoReductions().size();
    const size_t b_rank = expr.input(1)->as<TensorView>()->logicalNoReductions().size();
    const size_t batch_end = c.size() - (a_rank >= 2 ? 1 : 0) - (b_rank >= 2 ? 1 : 0);
    if (input == 0 && a_rank >= 2) {
      pair(a_rank - 2, batch_end);
      alignedBatch(a_rank - 2, batch_end);
    } else if (input == 1 && b_rank >= 2) {
      pair(b_rank - 1, c.size() - 1);
      alignedBatch(b_rank - 2, batch_end);
    }
  } else if (expr.op() == OpKind::Linear) {
    if (input == 0) {
      for (size_t d = 0; d + 1 < p.size(); ++d) pair(d, d);
    } else {
      pair(0, c.size() - 1);  // the weight's N, or the bias
    }
  }
  return pairs;
}

}  // namespace braze::host_detail
