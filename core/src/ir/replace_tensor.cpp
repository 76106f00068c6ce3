#include "ir/replace_tensor.h"

#include <vector>

namespace braze::ir_detail {

void replaceTensorEverywhere(Fusion& fusion, TensorView* old, TensorView* replacement) {
  const std::vector<Expr*> uses = old->uses();  // a copy: rewiring edits the list
  for (Expr* use : uses) use->replaceInput(old, replacement);
  if (fusion.isOutput(old)) fusion.replaceOutput(old, replacement);
}

}  // namespace braze::ir_detail
