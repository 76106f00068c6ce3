// propagateShardings: placing every tensor of a sharded definition from the ones the user
// placed, forward through the ops, then backward from the outputs.

#include "braze/host/sharding_propagation.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ir/sharding.h"
#include "host/contraction_pairs.h"

namespace braze {

namespace {

using DimPairs = host_detail::DimPairs;
using host_detail::exactPairs;

int64_t positionOf(const TensorView& tv, const IterDomain* id) {
  const std::vector<IterDomain*>& logical = tv.logical();
  auto found = std::find(logical.begin(), logical.end(), id);
  return found == logical.end() ? -1 : found - logical.begin();
}

// `from`'s sharding carried to `to` through `pairs` (from's dim, to's dim), or, with
// `backward`, through the pairs read the other way: the mesh, and each sharded axis whose dim
// pairs with an iteration dim of `to`.
Sharding carried(const TensorView& from, const TensorView& to, const DimPairs& pairs,
                 bool backward) {
  Sharding sharding{from.sharding()->mesh, {}, {}};
  for (const ShardedAxis& axis : from.sharding()->axes) {
    const IterDomain* dim = from.logical()[static_cast<size_t>(axis.axis)];
    for (const auto& [producer, consumer] : pairs) {
      const IterDomain* source = backward ? consumer : producer;
      const IterDomain* target = backward ? producer : consumer;
      if (source != dim || !target->isIteration()) continue;
      const int64_t position = positionOf(to, target);
      if (position >= 0) sharding.axes.push_back({position, axis.mesh_dim});
      break;
    }
  }
  return sharding;
}

}  // namespace

int64_t propagateShardings(Fusion& fusion) {
  int64_t placed = 0;
  const std::vector<Expr*> exprs = fusion.exprs();
  for (const Expr* expr : exprs) {
    // The first input with sharded axes, else the first placed one: a column-sharded weight
    // shards a matmul's N even where the activations beside it are replicated.
    std::optional<size_t> source;
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      const auto* tv = expr->input(i)->dynCast<TensorView>();
      if (tv == nullptr || !tv->sharding()) continue;
      if (!source) source = i;
      if (!tv->sharding()->isReplicated()) {
        source = i;
        break;
      }
    }
    if (!source) continue;
    const auto* from = expr->input(*source)->as<TensorView>();
    for (size_t o = 0; o < expr->outputs().size(); ++o) {
      auto* to = expr->output(o)->dynCast<TensorView>();
      if (to == nullptr || to->sharding()) continue;
      Sharding sharding = carried(*from, *to, exactPairs(*expr, *source, o), /*backward=*/false);
      // Mesh dims the source leaves whole take the other inputs' split axes on that mesh: on a
      // 2-D mesh, rows split over DIDy by the activations and N over DIDx by the weight.
      for (size_t i = 0; i < expr->inputs().size(); ++i) {
        const auto* other = expr->input(i)->dynCast<TensorView>();
        if (i == *source || other == nullptr || !other->sharding() ||
            other->sharding()->mesh != sharding.mesh)
          continue;
        const Sharding more = carried(*other, *to, exactPairs(*expr, i, o), /*backward=*/false);
        for (const ShardedAxis& axis : more.axes) {
          const bool free =
              std::none_of(sharding.axes.begin(), sharding.axes.end(), [&](const ShardedAxis& a) {
                return a.mesh_dim == axis.mesh_dim || a.axis == axis.axis;
              });
          if (free) sharding.axes.push_back(axis);
        }
      }
      std::sort(sharding.axes.begin(), sharding.axes.end(),
                [](const ShardedAxis& a, const ShardedAxis& b) { return a.mesh_dim < b.mesh_dim; });
      to->setSharding(std::move(sharding));
      ++placed;
    }
  }
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* expr = *it;
    std::optional<size_t> source;
    for (size_t o = 0; o < expr->outputs().size() && !source; ++o) {
      const auto* tv = expr->output(o)->dynCast<TensorView>();
      if (tv != nullptr && tv->sharding()) source = o;
    }
    if (!source) continue;
    const auto* from = expr->output(*source)->as<TensorView>();
    for (size_t i = 0; i < expr->inputs().size(); ++i) {
      auto* to = expr->input(i)->dynCast<TensorView>();
      if (to == nullptr || to->sharding()) continue;
      to->setSharding(carried(*from, *to, exactPairs(*expr, i, *source), /*backward=*/true));
      ++placed;
    }
  }
  return placed;
}

}  // namespace braze
