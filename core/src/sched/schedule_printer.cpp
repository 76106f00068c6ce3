#include "braze/sched/schedule_printer.h"

#include <sstream>

#include "braze/sched/transform_history.h"

namespace braze {

namespace {

// A scalar as an expression over constants and symbolic leaves: "ceil_div(s1, 4)".
std::string scalarText(const Val* scalar) {
  const Expr* def = scalar->definition();
  if (def == nullptr) return scalar->name();
  std::string text = std::string(toString(def->op())) + "(";
  for (size_t i = 0; i < def->inputs().size(); ++i) {
    if (i > 0) text += ", ";
    text += scalarText(def->input(i));
  }
  return text + ")";
}

char prefixOf(const IterDomain* id) {
  return id->isIteration() ? 'i' : id->isReduction() ? 'r' : 'b';
}

std::string shortName(const Val* val) {
  const auto* id = val->as<IterDomain>();
  return prefixOf(id) + std::to_string(id->number());
}

std::string idText(const IterDomain* id) {
  std::string text = shortName(id) + "{" + scalarText(id->extent());
  if (id->hasExpandedExtent()) text += " ex " + scalarText(id->expandedExtent());
  text += "}";
  if (id->parallelType() != ParallelType::Serial) {
    text += ":" + std::string(toString(id->parallelType()));
  }
  return text;
}

void printDomain(std::ostream& os, std::string_view label, const std::vector<IterDomain*>& domain,
                 const std::vector<Expr*>& transforms) {
  os << "    " << label << " [";
  for (size_t i = 0; i < domain.size(); ++i) os << (i > 0 ? ", " : "") << idText(domain[i]);
  os << "]\n";
  for (const Expr* expr : transforms) {
    os << "      ";
    if (expr->op() == OpKind::Split) {
      os << "split " << (expr->attribute<bool>("inner_split") ? "" : "outer ")
         << shortName(expr->input(0)) << " by " << scalarText(expr->input(1)) << " -> "
         << shortName(expr->output(0)) << ", " << shortName(expr->output(1));
    } else {
      os << "merge " << shortName(expr->input(0)) << ", " << shortName(expr->input(1)) << " -> "
         << shortName(expr->output(0));
    }
    os << "\n";
  }
}

void printTensor(std::ostream& os, const TensorView* tv) {
  os << "  " << tv->name() << ": " << tv->dtype();
  const Fusion& fusion = tv->fusion();
  if (fusion.isInput(tv)) {
    os << " = input " << fusion.inputIndex(tv);
  } else if (const Expr* def = tv->definition()) {
    os << " = " << def->op() << "(";
    bool first = true;
    for (const Val* input : def->inputs()) {
      if (!input->isA<TensorView>()) continue;
      os << (first ? "" : ", ") << input->name();
      first = false;
    }
    os << ")";
  }
  if (fusion.isOutput(tv)) os << " output";
  os << "  memory=" << toString(tv->memoryType()) << " inline=" << tv->inlinePosition() << "\n";
  if (tv->hasRoot()) printDomain(os, "root   ", tv->root(), {});
  printDomain(os, "logical", tv->logical(), rootTransforms(tv));
  printDomain(os, "loop   ", tv->loop(), loopTransforms(tv));
}

}  // namespace

void printSchedule(std::ostream& os, const Fusion& fusion) {
  os << "schedule:\n";
  for (const Val* input : fusion.inputs()) {
    if (const auto* tv = input->dynCast<TensorView>()) printTensor(os, tv);
  }
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* output : expr->outputs()) {
      if (const auto* tv = output->dynCast<TensorView>()) printTensor(os, tv);
    }
  }
}

std::string printSchedule(const Fusion& fusion) {
  std::ostringstream os;
  printSchedule(os, fusion);
  return os.str();
}

std::string printSchedule(const TensorView* tv) {
  std::ostringstream os;
  printTensor(os, tv);
  return os.str();
}

}  // namespace braze
