#include "braze/sched/logical_map.h"

#include <algorithm>

#include "sched/iter_domain_transforms.h"

namespace braze {

namespace {

using Dims = std::vector<IterDomain*>;

Dims withoutReductions(const Dims& dims) {
  Dims visible;
  for (IterDomain* id : dims) {
    if (!id->isReduction()) visible.push_back(id);
  }
  return visible;
}

// Numpy broadcasting: dims are matched from the right.
void mapFromRight(const Dims& producer, const Dims& consumer, std::vector<LogicalPair>& pairs) {
  if (producer.size() > consumer.size()) return;
  const size_t offset = consumer.size() - producer.size();
  for (size_t i = 0; i < producer.size(); ++i) pairs.push_back({producer[i], consumer[i + offset]});
}

void mapPositionally(const Dims& producer, const Dims& consumer, std::vector<LogicalPair>& pairs) {
  const size_t n = std::min(producer.size(), consumer.size());
  for (size_t i = 0; i < n; ++i) pairs.push_back({producer[i], consumer[i]});
}

// Slice and pad leave a dim's coordinates unchanged only when it is taken whole.
void mapWholeDims(const Expr& expr, const Dims& producer, const Dims& consumer,
                  std::vector<LogicalPair>& pairs) {
  const size_t first_argument = expr.op() == OpKind::Pad ? 2 : 1;
  for (size_t i = 0; i < producer.size() && i < consumer.size(); ++i) {
    const auto* offset = expr.input(first_argument + 2 * i)->as<Scalar>();
    if (offset->isConstantEqualTo(0) && producer[i]->extent() == consumer[i]->extent() &&
        producer[i]->expandedExtent() == consumer[i]->expandedExtent()) {
      pairs.push_back({producer[i], consumer[i]});
    }
  }
}

void mapMatmul(const Expr& expr, size_t operand, const Dims& producer, const Dims& consumer,
               std::vector<LogicalPair>& pairs) {
  const size_t rank_a = withoutReductions(expr.input(0)->as<TensorView>()->logical()).size();
  const size_t rank_b = withoutReductions(expr.input(1)->as<TensorView>()->logical()).size();
  const size_t batch_a = rank_a >= 2 ? rank_a - 2 : 0;
  const size_t batch_b = rank_b >= 2 ? rank_b - 2 : 0;
  const size_t batch = std::max(batch_a, batch_b);
  IterDomain* k = consumer.back();
  if (operand == 0) {
    for (size_t i = 0; i < batch_a; ++i)
      pairs.push_back({producer[i], consumer[batch - batch_a + i]});
    if (rank_a >= 2) pairs.push_back({producer[rank_a - 2], consumer[batch]});
    pairs.push_back({producer.back(), k});
  } else {
    for (size_t i = 0; i < batch_b; ++i)
      pairs.push_back({producer[i], consumer[batch - batch_b + i]});
    if (rank_b >= 2) {
      pairs.push_back({producer[rank_b - 2], k});
      pairs.push_back({producer.back(), consumer[batch + (rank_a >= 2 ? 1 : 0)]});
    } else {
      pairs.push_back({producer[0], k});
    }
  }
}

void mapLinear(const Expr& expr, size_t operand, const Dims& producer, const Dims& consumer,
               std::vector<LogicalPair>& pairs) {
  const size_t rank_x = withoutReductions(expr.input(0)->as<TensorView>()->logical()).size();
  IterDomain* k = consumer.back();
  if (operand == 0) {
    for (size_t i = 0; i + 1 < rank_x; ++i) pairs.push_back({producer[i], consumer[i]});
    pairs.push_back({producer.back(), k});
  } else if (operand == 1) {
    if (producer.size() == 2) pairs.push_back({producer[0], consumer[rank_x - 1]});
    pairs.push_back({producer.back(), k});
  } else if (producer.size() == 1 && consumer.size() > rank_x) {
    pairs.push_back({producer[0], consumer[rank_x - 1]});
  }
}

}  // namespace

std::vector<LogicalPair> logicalMap(const TensorView* producer, const TensorView* consumer) {
  const Expr* expr = consumer->definition();
  BRAZE_USER_CHECK(expr != nullptr)
      << "logicalMap: " << sched_detail::tensorLabel(consumer) << " has no definition, so "
      << producer->name() << " is not its producer";
  const auto found = std::find(expr->inputs().begin(), expr->inputs().end(), producer);
  BRAZE_USER_CHECK(found != expr->inputs().end())
      << "logicalMap: " << producer->name() << " is not an input of " << expr->op()
      << " that defines " << consumer->name();
  const auto operand = static_cast<size_t>(found - expr->inputs().begin());

  const Dims p = producer->logicalNoReductions();
  const Dims& c_all = consumer->root();
  const Dims c = withoutReductions(c_all);
  std::vector<LogicalPair> pairs;
  const OpKind op = expr->op();
  if (isElementwise(op) || familyOf(op) == OpFamily::Memory) {
    mapFromRight(p, c, pairs);
    return pairs;
  }
  switch (familyOf(op)) {
    case OpFamily::Reduction:
    case OpFamily::Welford:
    case OpFamily::Scan:
      mapPositionally(p, c_all, pairs);
      return pairs;
    default:
      break;
  }
  switch (op) {
    case OpKind::Broadcast: {
      const auto& flags = expr->attribute<std::vector<bool>>("flags");
      size_t next = 0;
      for (size_t i = 0; i < flags.size() && i < c.size(); ++i) {
        if (!flags[i] && next < p.size()) pairs.push_back({p[next++], c[i]});
      }
      return pairs;
    }
    case OpKind::Expand:
      mapPositionally(p, c, pairs);
      return pairs;
    case OpKind::Permute: {
      const auto& perm = expr->attribute<std::vector<int64_t>>("perm");
      for (size_t i = 0; i < perm.size() && i < c.size(); ++i) {
        pairs.push_back({p[static_cast<size_t>(perm[i])], c[i]});
      }
      std::sort(pairs.begin(), pairs.end(), [&p](const LogicalPair& a, const LogicalPair& b) {
        return std::find(p.begin(), p.end(), a.producer) <
               std::find(p.begin(), p.end(), b.producer);
      });
      return pairs;
    }
    case OpKind::Squeeze: {
      const auto& flags = expr->attribute<std::vector<bool>>("flags");
      size_t next = 0;
      for (size_t i = 0; i < flags.size() && i < p.size(); ++i) {
        if (!flags[i] && next < c.size()) pairs.push_back({p[i], c[next++]});
      }
      return pairs;
    }
    case OpKind::Slice:
    case OpKind::Pad:
      if (operand == 0) mapWholeDims(*expr, p, c, pairs);
      return pairs;
    case OpKind::Cat: {
      const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
      for (size_t i = 0; i < p.size() && i < c.size(); ++i) {
        if (i != dim) pairs.push_back({p[i], c[i]});
      }
      return pairs;
    }
    case OpKind::Select: {
      const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
      size_t next = 0;
      for (size_t i = 0; i < p.size(); ++i) {
        if (i != dim && next < c.size()) pairs.push_back({p[i], c[next++]});
      }
      return pairs;
    }
    case OpKind::IndexSelect: {
      // x's dim `dim` is replaced by the index's dims (one for index_select).
      const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
      const size_t index_rank = expr->input(1)->as<TensorView>()->logicalNoReductions().size();
      if (operand == 0) {
        for (size_t i = 0; i < p.size(); ++i) {
          const size_t to = i < dim ? i : i + index_rank - 1;
          if (i != dim && to < c.size()) pairs.push_back({p[i], c[to]});
        }
      } else {
        for (size_t j = 0; j < p.size() && dim + j < c.size(); ++j)
          pairs.push_back({p[j], c[dim + j]});
      }
      return pairs;
    }
    case OpKind::Gather: {
      const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
      if (operand == 1) {
        mapPositionally(p, c, pairs);
        return pairs;
      }
      for (size_t i = 0; i < p.size() && i < c.size(); ++i) {
        if (i != dim && p[i]->logicalExtent() == c[i]->logicalExtent()) {
          pairs.push_back({p[i], c[i]});
        }
      }
      return pairs;
    }
    case OpKind::Matmul:
      mapMatmul(*expr, operand, p, c_all, pairs);
      return pairs;
    case OpKind::Linear:
      mapLinear(*expr, operand, p, c_all, pairs);
      return pairs;
    default:
      // Reshape reorganizes coordinates; factories read no tensor.
      return pairs;
  }
}

std::vector<TensorView*> producersOf(const TensorView* tv) {
  std::vector<TensorView*> producers;
  const Expr* def = tv->definition();
  if (def == nullptr) return producers;
  for (Val* input : def->inputs()) {
    auto* producer = input->dynCast<TensorView>();
    if (producer != nullptr &&
        std::find(producers.begin(), producers.end(), producer) == producers.end()) {
      producers.push_back(producer);
    }
  }
  return producers;
}

std::vector<TensorView*> consumersOf(const TensorView* tv) {
  std::vector<TensorView*> consumers;
  for (const Expr* use : tv->uses()) {
    for (Val* output : use->outputs()) {
      auto* consumer = output->dynCast<TensorView>();
      if (consumer != nullptr &&
          std::find(consumers.begin(), consumers.end(), consumer) == consumers.end()) {
        consumers.push_back(consumer);
      }
    }
  }
  return consumers;
}

}  // namespace braze
