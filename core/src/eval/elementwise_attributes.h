#pragma once

// The ElementwiseAttributes of an Expr, read from its attributes. Internal to the evaluator.

#include "braze/ir/statement.h"
#include "braze/ops/elementwise_semantics.h"

namespace braze::eval_detail {

inline ElementwiseAttributes elementwiseAttributesOf(const Expr& expr) {
  ElementwiseAttributes attributes;
  if (expr.op() == OpKind::Gelu && expr.hasAttribute("approximate")) {
    attributes.gelu_tanh = expr.attribute<std::string>("approximate") == "tanh";
  }
  return attributes;
}

}  // namespace braze::eval_detail
