#include "host/contraction_pairs.h"

#include "lower/op_dim_map.h"

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

DimPairs exactPairs(const Expr& expr, size_t input, size_t output) {
  DimPairs pairs;
  for (const lower::DimPair& pair : lower::mapProducerToConsumer(expr, input, output)) {
    if (pair.exact) pairs.emplace_back(pair.producer, pair.consumer);
  }
  if (output == 0 && (expr.op() == OpKind::Matmul || expr.op() == OpKind::Linear)) {
    for (const auto& pair : contractionPairs(expr, input)) pairs.push_back(pair);
  }
  return pairs;
}

const IterDomain* contractedDim(const Expr& expr, size_t input) {
  if (expr.op() != OpKind::Matmul && expr.op() != OpKind::Linear) return nullptr;
  const auto* operand = expr.input(input)->dynCast<TensorView>();
  if (operand == nullptr || input > 1) return nullptr;  // a linear's bias has no K
  const std::vector<IterDomain*> dims = operand->logicalNoReductions();
  if (dims.empty()) return nullptr;
  // matmul: a's last dim, b's first of its last two (its only dim when 1-D); linear: the last
  // dim of x and of the weight ([N, K] or [K]).
  if (expr.op() == OpKind::Matmul && input == 1 && dims.size() >= 2) return dims[dims.size() - 2];
  return dims.back();
}

}  // namespace braze::host_detail
