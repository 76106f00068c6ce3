#include "runtime/extent_equalities.h"

#include <functional>
#include <set>
#include <sstream>
#include <utility>

#include "braze/ir/scatter_as_matches.h"
#include "braze/sched/logical_map.h"

namespace braze::runtime_detail {

namespace {

std::string describeOp(const Expr& expr) {
  std::ostringstream os;
  os << expr.op() << " ";
  for (size_t i = 0; i < expr.outputs().size(); ++i)
    os << (i ? ", " : "") << expr.outputs()[i]->name();
  os << " = f(";
  for (size_t i = 0; i < expr.inputs().size(); ++i)
    os << (i ? ", " : "") << expr.inputs()[i]->name();
  os << ")";
  return os.str();
}

int64_t positionOf(const TensorView& tv, const IterDomain* id) {
  for (size_t d = 0; d < tv.logical().size(); ++d) {
    if (tv.logical()[d] == id) return static_cast<int64_t>(d);
  }
  return -1;
}

}  // namespace

std::vector<ExtentEquality> collectExtentEqualities(const Fusion& fusion) {
  std::vector<ExtentEquality> equalities;
  std::set<std::pair<const Val*, const Val*>> seen;
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* output : expr->outputs()) {
      const auto* consumer = output->dynCast<TensorView>();
      if (consumer == nullptr) continue;
      for (const TensorView* producer : producersOf(consumer)) {
        for (const LogicalPair& pair : logicalMap(producer, consumer)) {
          // A broadcast dim repeats one value: any size pairs with it.
          if (pair.producer->isBroadcast() || pair.consumer->isBroadcast()) continue;
          const Scalar* a = pair.producer->logicalExtent();
          const Scalar* b = pair.consumer->logicalExtent();
          if (a == b) continue;
          if (a->isConstant() && b->isConstant() && a->constantInt() == b->constantInt()) continue;
          // Built by value: std::minmax returns references, here to the temporaries that
          // convert a and b to const Val*, dead by the next statement.
          using Key = std::pair<const Val*, const Val*>;
          const Key key = std::less<const Val*>()(a, b) ? Key(a, b) : Key(b, a);
          if (!seen.insert(key).second) continue;
          std::ostringstream where;
          where << describeOp(*expr) << ": dim " << positionOf(*producer, pair.producer) << " of "
                << producer->name() << " and dim " << positionOf(*consumer, pair.consumer) << " of "
                << consumer->name();
          equalities.push_back({a, b, where.str()});
        }
      }
    }
    if (expr->op() == OpKind::Scatter) {
      const auto dim = static_cast<size_t>(expr->attribute<int64_t>("dim"));
      const auto* index = expr->input(1)->as<TensorView>();
      const std::vector<IterDomain*> index_dims = index->logicalNoReductions();
      for (size_t operand : {size_t{0}, size_t{2}}) {
        const auto* other = expr->input(operand)->as<TensorView>();
        const std::vector<IterDomain*> other_dims = other->logicalNoReductions();
        for (size_t d = 0; d < index_dims.size() && d < other_dims.size(); ++d) {
          if (operand == 0 && d == dim) continue;
          const Scalar* a = index_dims[d]->logicalExtent();
          const Scalar* b = other_dims[d]->logicalExtent();
          if (!scatterAssumesEqual(a, b)) continue;
          std::ostringstream where;
          where << describeOp(*expr) << ": dim " << d << " of the index " << index->name()
                << " and of " << (operand == 2 ? "src " : "the input ") << other->name()
                << " (a scatter whose sizes are known only at run time runs with an index as "
                   "large as src, and as the input outside its dim; give sizes that differ "
                   "in the definition)";
          equalities.push_back({a, b, where.str()});
        }
      }
    }
  }
  return equalities;
}

void checkExtentEqualities(const std::vector<ExtentEquality>& equalities,
                           ExpressionEvaluator& extents, std::string_view subject) {
  // The kernel indexes paired dims with one loop; the reference evaluator finds a mismatch
  // only when it reaches the op, the kernel never would.
  for (const ExtentEquality& equality : equalities) {
    const int64_t a = toInt64(extents.evaluateOrThrow(equality.a, equality.where));
    const int64_t b = toInt64(extents.evaluateOrThrow(equality.b, equality.where));
    BRAZE_USER_CHECK(a == b) << subject << " cannot run with these inputs: " << equality.where
                             << " must have the same size, but they are " << a << " and " << b
                             << " (" << equality.a->name() << ", " << equality.b->name()
                             << "); pass inputs whose sizes agree (only dims declared broadcast "
                                "may have size 1 against a larger one)";
  }
}

}  // namespace braze::runtime_detail
