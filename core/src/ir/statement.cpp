#include "braze/ir/statement.h"

#include <algorithm>
#include <sstream>

#include "braze/ir/fusion.h"

namespace braze {

Statement::Statement(Fusion& fusion, StatementKind kind) : fusion_(&fusion), kind_(kind) {}

Val::Val(Fusion& fusion, StatementKind kind, DataType dtype)
    : Statement(fusion, kind), dtype_(dtype) {}

Expr::Expr(Fusion& fusion, OpKind op, std::vector<Val*> inputs, std::vector<Val*> outputs,
           std::vector<Attribute> attributes)
    : Statement(fusion, StatementKind::Expr),
      op_(op),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      attributes_(std::move(attributes)) {
  for (Val* output : outputs_) {
    BRAZE_INTERNAL_CHECK(output != nullptr && &output->fusion() == &fusion)
        << op_ << ": output belongs to another fusion";
    BRAZE_INTERNAL_CHECK(output->definition_ == nullptr)
        << op_ << ": output " << output->name() << " already has a definition";
    output->definition_ = this;
  }
  for (Val* input : inputs_) {
    BRAZE_INTERNAL_CHECK(input != nullptr && &input->fusion() == &fusion)
        << op_ << ": input belongs to another fusion";
    // An input used twice (x * x) is recorded once.
    if (input->uses_.empty() || input->uses_.back() != this) input->uses_.push_back(this);
  }
}

Val* Expr::input(size_t i) const {
  BRAZE_INTERNAL_CHECK(i < inputs_.size())
      << op_ << " has " << inputs_.size() << " inputs; asked for input " << i;
  return inputs_[i];
}

Val* Expr::output(size_t i) const {
  BRAZE_INTERNAL_CHECK(i < outputs_.size())
      << op_ << " has " << outputs_.size() << " outputs; asked for output " << i;
  return outputs_[i];
}

void Expr::replaceInput(Val* old, Val* replacement) {
  BRAZE_INTERNAL_CHECK(replacement != nullptr && &replacement->fusion() == &fusion())
      << op_ << ": the replacement input belongs to another fusion";
  bool found = false;
  for (Val*& input : inputs_) {
    if (input != old) continue;
    input = replacement;
    found = true;
  }
  BRAZE_INTERNAL_CHECK(found) << op_ << " does not read " << old->name();
  std::erase(old->uses_, this);
  if (std::find(replacement->uses_.begin(), replacement->uses_.end(), this) ==
      replacement->uses_.end()) {
    replacement->uses_.push_back(this);
  }
}

void Expr::detach() {
  for (Val* input : inputs_) std::erase(input->uses_, this);
  for (Val* output : outputs_) {
    if (output->definition_ == this) output->definition_ = nullptr;
  }
  inputs_.clear();
  outputs_.clear();
}

void Expr::replaceOutput(Val* old, Val* replacement) {
  BRAZE_INTERNAL_CHECK(replacement != nullptr && &replacement->fusion() == &fusion())
      << op_ << ": the replacement output belongs to another fusion";
  BRAZE_INTERNAL_CHECK(replacement->definition_ == nullptr)
      << op_ << ": " << replacement->name() << " already has a definition";
  auto it = std::find(outputs_.begin(), outputs_.end(), old);
  BRAZE_INTERNAL_CHECK(it != outputs_.end()) << op_ << " does not define " << old->name();
  *it = replacement;
  old->definition_ = nullptr;
  replacement->definition_ = this;
}

bool Expr::hasAttribute(std::string_view name) const {
  for (const Attribute& attribute : attributes_) {
    if (attribute.name == name) return true;
  }
  return false;
}

const AttributeValue& Expr::findAttribute(std::string_view name) const {
  for (const Attribute& attribute : attributes_) {
    if (attribute.name == name) return attribute.value;
  }
  BRAZE_INTERNAL_CHECK(false) << op_ << " has no attribute '" << name << "'";
  __builtin_unreachable();
}

Statement* Expr::cloneInto(Fusion& target, const CloneMap& map) const {
  return target.create<Expr>(op_, std::vector<Val*>{}, std::vector<Val*>{}, attributes_);
}

void Expr::restoreEdges(const Expr& original, const CloneMap& map) {
  for (Val* output : original.outputs_) {
    Val* twin = map[output];
    BRAZE_INTERNAL_CHECK(twin->definition_ == nullptr)
        << op_ << ": clone found " << twin->name() << " defined twice";
    twin->definition_ = this;
    outputs_.push_back(twin);
  }
  for (Val* input : original.inputs_) {
    Val* twin = map[input];
    if (twin->uses_.empty() || twin->uses_.back() != this) twin->uses_.push_back(this);
    inputs_.push_back(twin);
  }
}

std::string toString(const AttributeValue& value) {
  std::ostringstream os;
  std::visit(
      [&os](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          os << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::string>) {
          os << '"' << v << '"';
        } else if constexpr (std::is_same_v<T, double>) {
          os << toString(ScalarValue(v));
        } else if constexpr (std::is_same_v<T, int64_t>) {
          os << v;
        } else {
          os << '[';
          for (size_t i = 0; i < v.size(); ++i) {
            if (i > 0) os << ", ";
            if constexpr (std::is_same_v<T, std::vector<bool>>) {
              os << (v[i] ? "true" : "false");
            } else {
              os << v[i];
            }
          }
          os << ']';
        }
      },
      value);
  return os.str();
}

}  // namespace braze
