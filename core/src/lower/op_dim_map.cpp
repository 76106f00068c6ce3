#include "lower/op_dim_map.h"

namespace braze::lower {

namespace {

// A dim of constant extent 1 broadcasts like a Broadcast dim (as the evaluator treats it).
bool actsAsBroadcast(const IterDomain* id) {
  return id->isBroadcast() || id->logicalExtent()->isConstantEqualTo(1);
}

bool isExactPair(const IterDomain* producer, const IterDomain* consumer) {
  // A Broadcast dim stands for index 0 of storage, so it only iterates like the consumer when
  // the consumer's dim is a broadcast too (and neither is expanded).
  if (actsAsBroadcast(producer) || actsAsBroadcast(consumer)) {
    return actsAsBroadcast(producer) && actsAsBroadcast(consumer) &&
           !producer->hasExpandedExtent() && !consumer->hasExpandedExtent();
  }
  return true;
}

void addPair(std::vector<DimPair>& pairs, const IterDomain* p, const IterDomain* c) {
  pairs.push_back({p, c, isExactPair(p, c)});
}

bool isConstantZero(const Val* v) {
  const auto* s = v->dynCast<Scalar>();
  return s != nullptr && s->isConstantEqualTo(0);
}

}  // namespace

std::vector<DimPair> mapProducerToConsumer(const Expr& expr, size_t input, size_t output) {
  std::vector<DimPair> pairs;
  const auto* producer = expr.input(input)->dynCast<TensorView>();
  const auto* consumer = expr.output(output)->dynCast<TensorView>();
  if (producer == nullptr || consumer == nullptr) return pairs;
  const std::vector<IterDomain*> p_dims = producer->logicalNoReductions();
  // The op's dims refer to the consumer's root domain (its logical domain except for the
  // partial-result tensor rFactor makes).
  const std::vector<IterDomain*>& c_all = consumer->root();
  std::vector<IterDomain*> c_dims;
  for (IterDomain* id : c_all) {
    if (!id->isReduction()) c_dims.push_back(id);
  }

  switch (familyOf(expr.op())) {
    case OpFamily::Unary:
    case OpFamily::Cast:
    case OpFamily::Binary:
    case OpFamily::Ternary:
    case OpFamily::Memory: {
      // Operands are aligned from the right.
      const size_t lead = c_dims.size() - p_dims.size();
      for (size_t d = 0; d < p_dims.size(); ++d) addPair(pairs, p_dims[d], c_dims[lead + d]);
      return pairs;
    }
    case OpFamily::Reduction:
    case OpFamily::Welford:
    case OpFamily::Scan:
      // The output keeps every input dim in place, reduced ones as Reduction IterDomains (a
      // scan reduces none).
      for (size_t d = 0; d < p_dims.size() && d < c_all.size(); ++d)
        addPair(pairs, p_dims[d], c_all[d]);
      return pairs;
    default:
      break;
  }

  switch (expr.op()) {
    case OpKind::Broadcast: {
      const auto& flags = expr.attribute<std::vector<bool>>("flags");
      size_t next = 0;
      for (size_t d = 0; d < flags.size(); ++d) {
        if (!flags[d]) addPair(pairs, p_dims[next++], c_dims[d]);
      }
      return pairs;
    }
    case OpKind::Expand:
      for (size_t d = 0; d < p_dims.size(); ++d) addPair(pairs, p_dims[d], c_dims[d]);
      return pairs;
    case OpKind::Permute: {
      const auto& perm = expr.attribute<std::vector<int64_t>>("perm");
      for (size_t i = 0; i < perm.size(); ++i)
        addPair(pairs, p_dims[static_cast<size_t>(perm[i])], c_dims[i]);
      return pairs;
    }
    case OpKind::Squeeze: {
      const auto& flags = expr.attribute<std::vector<bool>>("flags");
      size_t next = 0;
      for (size_t d = 0; d < flags.size(); ++d) {
        if (!flags[d]) addPair(pairs, p_dims[d], c_dims[next++]);
      }
      return pairs;
    }
    case OpKind::Slice: {
      if (input != 0) return pairs;
      for (size_t d = 0; d < p_dims.size(); ++d) {
        const Val* start = expr.input(1 + 2 * d);
        const auto* step = expr.input(2 + 2 * d)->as<Scalar>();
        if (isConstantZero(start) && step->isConstantEqualTo(1) &&
            p_dims[d]->extent() == c_dims[d]->extent())
          addPair(pairs, p_dims[d], c_dims[d]);
      }
      return pairs;
    }
    case OpKind::Pad: {
      if (input != 0) return pairs;
      for (size_t d = 0; d < p_dims.size(); ++d) {
        if (isConstantZero(expr.input(2 + 2 * d)) && isConstantZero(expr.input(3 + 2 * d)))
          addPair(pairs, p_dims[d], c_dims[d]);
      }
      return pairs;
    }
    case OpKind::Cat: {
      const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
      for (size_t d = 0; d < p_dims.size(); ++d) {
        if (d != dim) addPair(pairs, p_dims[d], c_dims[d]);
      }
      return pairs;
    }
    case OpKind::Select: {
      if (input != 0) return pairs;
      const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
      size_t next = 0;
      for (size_t d = 0; d < p_dims.size(); ++d) {
        if (d != dim) addPair(pairs, p_dims[d], c_dims[next++]);
      }
      return pairs;
    }
    case OpKind::IndexSelect: {
      // x's dim `dim` is replaced by the index's dims (one for index_select).
      const auto dim = static_cast<size_t>(expr.attribute<int64_t>("dim"));
      const size_t index_rank = expr.input(1)->as<TensorView>()->logicalNoReductions().size();
      if (input == 0) {
        for (size_t d = 0; d < p_dims.size(); ++d) {
          if (d != dim) addPair(pairs, p_dims[d], c_dims[d < dim ? d : d + index_rank - 1]);
        }
      } else {
        for (size_t j = 0; j < p_dims.size(); ++j) addPair(pairs, p_dims[j], c_dims[dim + j]);
      }
      return pairs;
    }
    case OpKind::Gather:
      if (input == 1) {
        for (size_t d = 0; d < p_dims.size(); ++d) addPair(pairs, p_dims[d], c_dims[d]);
      }
      return pairs;
    default:
      return pairs;
  }
}

}  // namespace braze::lower
