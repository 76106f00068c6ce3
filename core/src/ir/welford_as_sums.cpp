#include "braze/ir/welford_as_sums.h"

#include <vector>

#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "ir/replace_tensor.h"
#include "ops/reduction_output.h"

namespace braze {

namespace {

// Whether the fusion reads `x` elsewhere than in `welford`: directly, or through another read of
// the tensor `x` was cast from (var_mean casts a bfloat16 input to float32 for itself).
bool readElsewhere(const TensorView* x) {
  if (x->uses().size() >= 2) return true;
  const Expr* definition = x->definition();
  if (definition == nullptr || definition->op() != OpKind::Cast) return false;
  const Val* source = definition->inputs()[0];
  return source->isA<TensorView>() && source->uses().size() >= 2;
}

}  // namespace

int64_t welfordAsSums(Fusion& fusion) {
  int64_t rewritten = 0;
  for (Expr* expr : fusion.exprs()) {
    if (expr->op() != OpKind::Welford) continue;
    auto* x = expr->inputs()[0]->as<TensorView>();
    auto* avg = expr->outputs()[0]->as<TensorView>();
    auto* m2 = expr->outputs()[1]->as<TensorView>();
    auto* n = expr->outputs()[2]->as<TensorView>();
    if (!n->uses().empty() || fusion.isOutput(n) || !readElsewhere(x)) continue;
    const auto& axes = expr->attribute<std::vector<int64_t>>("axes");
    std::vector<bool> reduced(x->logical().size(), false);
    for (int64_t axis : axes) reduced[static_cast<size_t>(axis)] = true;

    TensorView* mean = div(sum(x, axes), ops_detail::reducedElementCount(x, axes));
    TensorView* centered = sub(x, broadcast(mean, reduced));
    TensorView* squares = sum(mul(centered, centered), axes);
    ir_detail::replaceTensorEverywhere(fusion, avg, mean);
    ir_detail::replaceTensorEverywhere(fusion, m2, squares);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace braze
