#include "braze/ir/printer.h"

#include <numeric>
#include <sstream>
#include <unordered_set>

#include "braze/ir/fusion.h"

namespace braze {

namespace {

bool hasDefaultLayout(const TensorView* tv) {
  for (size_t i = 0; i < tv->allocationOrder().size(); ++i) {
    if (tv->allocationOrder()[i] != static_cast<int64_t>(i)) return false;
  }
  for (const std::optional<bool>& contiguous : tv->contiguity()) {
    if (contiguous.has_value() && !*contiguous) return false;
  }
  return true;
}

std::string layoutSuffix(const TensorView* tv) {
  if (hasDefaultLayout(tv)) return "";
  std::ostringstream os;
  os << " layout(order=" << toString(AttributeValue(tv->allocationOrder())) << ", contiguity=[";
  for (size_t i = 0; i < tv->contiguity().size(); ++i) {
    if (i > 0) os << ", ";
    const std::optional<bool>& contiguous = tv->contiguity()[i];
    os << (!contiguous ? "none" : (*contiguous ? "true" : "false"));
  }
  os << "])";
  return os.str();
}

class MathPrinter {
 public:
  explicit MathPrinter(std::ostream& os) : os_(os) {}

  void print(const Fusion& fusion) {
    os_ << "fusion(";
    for (size_t i = 0; i < fusion.inputs().size(); ++i) {
      const Val* input = fusion.inputs()[i];
      if (i > 0) os_ << ", ";
      os_ << describe(input);
      if (const auto* tv = input->dynCast<TensorView>()) os_ << layoutSuffix(tv);
    }
    os_ << ") -> (";
    for (size_t i = 0; i < fusion.outputs().size(); ++i) {
      if (i > 0) os_ << ", ";
      os_ << fusion.outputs()[i]->name();
      if (const Val* input = fusion.aliasedInput(fusion.outputs()[i]))
        os_ << " into " << input->name();
    }
    os_ << ")\n";
    for (Expr* expr : fusion.exprs()) {
      for (Val* output : expr->outputs()) printExtentDefinitions(output);
      printExpr(expr);
    }
  }

 private:
  // Extents computed by scalar exprs (a slice's length, a reshape's -1) appear once, right
  // before the first line that shows them.
  void printExtentDefinitions(const Val* val) {
    const auto* tv = val->dynCast<TensorView>();
    if (tv == nullptr) return;
    for (IterDomain* id : tv->logical()) {
      for (Scalar* extent : {id->extent(), id->expandedExtent()}) {
        if (extent == nullptr) continue;
        for (Expr* def : Fusion::scalarDefinitionChain(extent)) printExpr(def);
      }
    }
  }

  void printExpr(const Expr* expr) {
    if (!printed_.insert(expr).second) return;
    os_ << "  " << describe(expr) << "\n";
  }

  std::ostream& os_;
  std::unordered_set<const Expr*> printed_;
};

}  // namespace

std::string describe(const Val* val) {
  std::ostringstream os;
  os << val->name() << ": " << val->dtype();
  if (const auto* tv = val->dynCast<TensorView>()) {
    os << "[";
    for (size_t i = 0; i < tv->logical().size(); ++i) {
      if (i > 0) os << ", ";
      os << tv->logical()[i]->name();
    }
    os << "]";
    if (tv->streamAxis()) os << " stream(" << tv->streamAxis()->toString() << ")";
    if (tv->sharding()) os << " on " << tv->sharding()->toString();
  }
  return os.str();
}

std::string describe(const Expr* expr) {
  std::ostringstream os;
  for (size_t i = 0; i < expr->outputs().size(); ++i) {
    if (i > 0) os << ", ";
    os << describe(expr->outputs()[i]);
  }
  os << " = " << expr->op() << "(";
  bool first = true;
  for (const Val* input : expr->inputs()) {
    if (!first) os << ", ";
    first = false;
    os << input->name();
  }
  for (const Attribute& attribute : expr->attributes()) {
    if (!first) os << ", ";
    first = false;
    os << attribute.name << "=" << toString(attribute.value);
  }
  os << ")";
  return os.str();
}

void printMath(std::ostream& os, const Fusion& fusion) {
  MathPrinter(os).print(fusion);
}

std::string printMath(const Fusion& fusion) {
  std::ostringstream os;
  printMath(os, fusion);
  return os.str();
}

}  // namespace braze
