#include "braze/ir/output_aliases.h"

#include <set>
#include <vector>

#include "braze/ir/op_kind.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/shape.h"

namespace braze {

namespace {

// The Exprs of `fusion` (those that contribute to an output) that read `val`.
std::vector<const Expr*> liveUses(const std::set<const Expr*>& live, const Val* val) {
  std::vector<const Expr*> uses;
  for (const Expr* use : val->uses()) {
    if (live.count(use) != 0) uses.push_back(use);
  }
  return uses;
}

// Whether a chain of elementwise Exprs of `live` leads from `from` to `to`.
bool elementwiseChain(const std::set<const Expr*>& live, const Val* from, const Val* to) {
  std::vector<const Val*> frontier{from};
  std::set<const Val*> seen{from};
  while (!frontier.empty()) {
    const Val* val = frontier.back();
    frontier.pop_back();
    if (val == to) return true;
    for (const Expr* use : liveUses(live, val)) {
      if (!isElementwise(use->op())) continue;
      for (const Val* output : use->outputs()) {
        if (seen.insert(output).second) frontier.push_back(output);
      }
    }
  }
  return false;
}

}  // namespace

bool writesInPlaceSafely(const Fusion& fusion, const TensorView* output, const TensorView* input) {
  const std::vector<Expr*> exprs = fusion.exprs();
  const std::set<const Expr*> live(exprs.begin(), exprs.end());
  const std::vector<const Expr*> uses = liveUses(live, input);
  if (uses.empty()) return true;
  if (uses.size() != 1) return false;
  const Expr* use = uses.front();
  if (use->op() == OpKind::Scatter) {
    // In place only as the tensor written into, not as the index or the values written.
    return use->outputs()[0] == output && use->inputs()[0] == input && use->inputs()[1] != input &&
           use->inputs()[2] != input;
  }
  return isElementwise(use->op()) && elementwiseChain(live, input, output);
}

int64_t copyUnsafeAliasedOutputs(Fusion& fusion) {
  int64_t rewritten = 0;
  // A copy: the rewrite changes the list it walks.
  const std::vector<std::pair<Val*, Val*>> aliases = fusion.outputAliases();
  for (const auto& [output, input] : aliases) {
    auto* computed = output->as<TensorView>();
    const auto* into = input->as<TensorView>();
    if (writesInPlaceSafely(fusion, computed, into)) continue;
    TensorView* copy = segment_set(computed);
    fusion.replaceOutput(computed, copy);  // the alias and the layout move to the copy
    ++rewritten;
  }
  return rewritten;
}

}  // namespace braze
