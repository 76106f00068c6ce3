#pragma once

// A fast SegmentChecker that decides as the shipped schedulers do structurally, without sizes:
// the segmenter's tests and benchmark use it where the real registry would be slow or size
// dependent. Header-only, so that the benchmarks can use it without the test libraries.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "braze/sched/outputs_problem.h"
#include "braze/segment/segmented_fusion.h"

namespace braze::test {

/// Accepts a segment whose outputs are tensors it computes and whose reductions all reduce
/// the same dims of tensors of the same extents (one reduction kernel covers one set of
/// reduced dims): "fake::pointwise" without reductions, else "fake::reduction". `refused_ops`
/// are refused wherever they appear (an op no scheduler takes).
class StructuralSegmentChecker : public SegmentChecker {
 public:
  explicit StructuralSegmentChecker(std::vector<OpKind> refused_ops = {})
      : refused_ops_(std::move(refused_ops)) {}

  std::optional<std::string> accepts(const Segment& segment) override {
    ++calls;
    if (record_questions) {
      std::vector<int64_t> question;
      for (const Expr* expr : segment.exprs) question.push_back(expr->id());
      std::sort(question.begin(), question.end());
      question.push_back(-1);
      for (const Val* output : segment.outputs) question.push_back(output->id());
      if (!questions.insert(question).second) ++repeated_questions;
    }
    if (refusal(segment)) return std::nullopt;
    return hasReduction(segment) ? "fake::reduction" : "fake::pointwise";
  }

  std::string refusalReason(const Segment& segment) override {
    return refusal(segment).value_or("");
  }

  /// Why the segment is refused, or nullopt.
  std::optional<std::string> refusal(const Segment& segment) const {
    const Fusion& fusion = *segment.fusion;
    if (std::optional<std::string> problem = outputsProblem(fusion)) return problem;
    const Expr* first = nullptr;
    for (const Expr* expr : fusion.exprs()) {
      if (std::find(refused_ops_.begin(), refused_ops_.end(), expr->op()) != refused_ops_.end())
        return "fake: " + std::string(toString(expr->op())) + " is refused";
      if (!isReduction(expr)) continue;
      if (first == nullptr) {
        first = expr;
      } else if (signature(first) != signature(expr)) {
        return "fake: reductions " + first->output(0)->name() + " and " + expr->output(0)->name() +
               " reduce different dims or shapes";
      }
    }
    return std::nullopt;
  }

  int64_t calls = 0;
  /// Whether to remember each question (the segment's Exprs and outputs), to count repeats.
  bool record_questions = false;
  std::set<std::vector<int64_t>> questions;
  int64_t repeated_questions = 0;

 private:
  static bool isReduction(const Expr* expr) {
    const OpFamily family = familyOf(expr->op());
    return family == OpFamily::Reduction || family == OpFamily::Welford;
  }

  static bool hasReduction(const Segment& segment) {
    const std::vector<Expr*> exprs = segment.fusion->exprs();
    return std::any_of(exprs.begin(), exprs.end(), isReduction);
  }

  // Per dim of the reduction's input: whether it is reduced, and its extent's name (a symbolic
  // extent's name is unique in the segment; a constant's is its value).
  static std::vector<std::pair<bool, std::string>> signature(const Expr* reduction) {
    const auto* in = reduction->input(0)->as<TensorView>();
    const auto* out = reduction->output(0)->as<TensorView>();
    std::vector<std::pair<bool, std::string>> dims;
    const std::vector<IterDomain*> in_dims = in->logicalNoReductions();
    for (size_t d = 0; d < in_dims.size() && d < out->logical().size(); ++d)
      dims.emplace_back(out->logical()[d]->isReduction(), in_dims[d]->logicalExtent()->name());
    return dims;
  }

  std::vector<OpKind> refused_ops_;
};

}  // namespace braze::test
