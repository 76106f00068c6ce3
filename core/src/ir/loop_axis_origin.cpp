#include "ir/loop_axis_origin.h"

#include <algorithm>

namespace braze::ir_detail {

LoopAxisOriginOrReason loopAxisOrigin(const TensorView* tv, const IterDomain* id) {
  const std::vector<IterDomain*>& logical = tv->logical();
  auto found = std::find(logical.begin(), logical.end(), id);
  if (found != logical.end())
    return {LoopAxisOrigin{found - logical.begin(), nullptr, {}, false}, {}};
  const Expr* split = id->definition();
  const bool outer_of_split = split != nullptr && split->op() == OpKind::Split &&
                              split->output(0) == id && split->input(0)->isA<IterDomain>();
  const IterDomain* source = outer_of_split ? split->input(0)->as<IterDomain>() : nullptr;
  auto source_at = source ? std::find(logical.begin(), logical.end(), source) : logical.end();
  if (source_at == logical.end()) {
    return {std::nullopt, split == nullptr               ? "not derived from the logical domain"
                          : split->op() == OpKind::Merge ? "a merge of two axes"
                          : split->output(1) == id       ? "the inner axis of a split"
                                                   : "a split of an axis that was split already"};
  }
  LoopAxisOrigin origin;
  origin.logical_axis = source_at - logical.begin();
  origin.split = split;
  origin.constant_factor = split->input(1)->as<Scalar>()->constantInt();
  origin.by_count = !split->attribute<bool>("inner_split");
  return {origin, {}};
}

void replaceBySplit(std::vector<IterDomain*>& expected, const TensorView* tv,
                    const LoopAxisOrigin& origin) {
  if (origin.split == nullptr) return;
  const IterDomain* source = tv->logical()[static_cast<size_t>(origin.logical_axis)];
  // Found by identity: an earlier replacement may have made `expected` longer.
  const auto at = std::find(expected.begin(), expected.end(), source);
  if (at == expected.end()) return;
  *at = origin.split->output(0)->as<IterDomain>();
  expected.insert(at + 1, origin.split->output(1)->as<IterDomain>());
}

std::string tensorLabel(const TensorView* tv) {
  const int64_t input = tv->fusion().inputIndex(tv);
  return input < 0 ? tv->name() : tv->name() + " (input " + std::to_string(input) + ")";
}

}  // namespace braze::ir_detail
