// set: a copy of a tensor as a user op (nvFuser's set). The same Expr as the copies scheduling
// makes (core/src/sched/cache.cpp), so lowering, codegen and the schedulers treat it alike.

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"

namespace braze {

TensorView* set(TensorView* x) {
  BRAZE_USER_CHECK(x != nullptr) << "set: x is a null TensorView";
  Fusion& fusion = x->fusion();
  auto* y = fusion.create<TensorView>(x->dtype(), ops_detail::freshDomain(x));
  fusion.create<Expr>(OpKind::Set, std::vector<Val*>{x}, std::vector<Val*>{y});
  return y;
}

}  // namespace braze
