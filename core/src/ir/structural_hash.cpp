#include "braze/ir/structural_hash.h"

#include <functional>
#include <sstream>
#include <unordered_map>

#include "braze/ir/fusion.h"

namespace braze {

namespace {

class CanonicalWriter {
 public:
  std::string write(const Fusion& fusion) {
    os_ << "in";
    for (const Val* input : fusion.inputs()) os_ << ' ' << ref(input);
    os_ << '\n';
    for (const Expr* expr : fusion.exprs()) {
      os_ << expr->op() << '(';
      for (const Val* input : expr->inputs()) os_ << ref(input) << ',';
      os_ << ")->(";
      for (const Val* output : expr->outputs()) os_ << ref(output) << ',';
      os_ << ')';
      for (const Attribute& attribute : expr->attributes()) {
        os_ << ' ' << attribute.name << '=' << toString(attribute.value);
      }
      os_ << '\n';
    }
    os_ << "out";
    for (const Val* output : fusion.outputs()) os_ << ' ' << ref(output);
    os_ << '\n';
    // Only fusions that write outputs into inputs say so, so that others keep their form.
    for (const auto& [output, input] : fusion.outputAliases())
      os_ << "alias " << ref(output) << ' ' << ref(input) << '\n';
    return os_.str();
  }

 private:
  // A value is described in full the first time it appears and by its canonical number after.
  std::string ref(const Val* val) {
    if (const auto* scalar = val->dynCast<Scalar>(); scalar && scalar->isConstant()) {
      return "c:" + std::string(toString(scalar->dtype())) + ":" + toString(*scalar->value());
    }
    auto it = numbers_.find(val);
    if (it != numbers_.end()) return "%" + std::to_string(it->second);
    const int64_t number = static_cast<int64_t>(numbers_.size());
    numbers_.emplace(val, number);
    std::ostringstream text;
    text << '%' << number << '=' << describeNew(val);
    return text.str();
  }

  std::string describeNew(const Val* val) {
    std::ostringstream text;
    if (const auto* tv = val->dynCast<TensorView>()) {
      text << "tensor:" << tv->dtype() << '[';
      for (const IterDomain* id : tv->logical()) text << ref(id) << ',';
      text << "] order=" << toString(AttributeValue(tv->allocationOrder())) << " contig=";
      for (const std::optional<bool>& contiguous : tv->contiguity()) {
        text << (!contiguous ? 'n' : (*contiguous ? 't' : 'f'));
      }
      // Only stream-parallel tensors say so, so that other definitions keep their hashes.
      if (tv->streamAxis()) text << " stream=" << tv->streamAxis()->toString();
      if (tv->sharding()) text << " on=" << tv->sharding()->toString();
    } else if (const auto* id = val->dynCast<IterDomain>()) {
      text << "id:" << id->iterType() << '{' << ref(id->extent());
      if (id->hasExpandedExtent()) text << " ex " << ref(id->expandedExtent());
      text << '}';
    } else {
      text << "scalar:" << val->dtype();
      if (const Expr* def = val->definition()) {
        // Symbolic scalars computed from others: describe their computation inline.
        text << '=' << def->op() << '(';
        for (const Val* input : def->inputs()) text << ref(input) << ',';
        text << ")#" << indexOf(def, val);
      }
    }
    return text.str();
  }

  static size_t indexOf(const Expr* def, const Val* output) {
    for (size_t i = 0; i < def->outputs().size(); ++i) {
      if (def->outputs()[i] == output) return i;
    }
    return 0;
  }

  std::ostringstream os_;
  std::unordered_map<const Val*, int64_t> numbers_;
};

}  // namespace

std::string canonicalForm(const Fusion& fusion) {
  return CanonicalWriter().write(fusion);
}

size_t structuralHash(const Fusion& fusion) {
  return std::hash<std::string>{}(canonicalForm(fusion));
}

bool structurallyEqual(const Fusion& a, const Fusion& b) {
  return canonicalForm(a) == canonicalForm(b);
}

}  // namespace braze
