#include "braze/sched/unsupported_op_problem.h"

#include <sstream>

namespace braze {

std::optional<std::string> unsupportedOpProblem(const Fusion& fusion, OpRefusal refusal) {
  for (const Expr* expr : fusion.exprs()) {
    if (std::optional<std::string> reason = refusal(expr->op())) {
      std::ostringstream os;
      os << expr->op() << " is not supported: " << *reason;
      return os.str();
    }
  }
  return std::nullopt;
}

}  // namespace braze
