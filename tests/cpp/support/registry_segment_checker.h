#pragma once

// A SegmentChecker that asks the scheduler registry (the shipped plugins) about each segment,
// with the sizes one run of the original fusion would give it. Header-only, so that the
// benchmarks can use it without the test libraries.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/segment/segmented_fusion.h"

namespace braze::test {

/// Each segment's arguments are contiguous tensors whose sizes the original's extents give for
/// the original's `tensor_sizes` and `scalars` (as contiguousRuntimeInfo), and scalar values
/// evaluated on the original; the answer is registry.choose's scheduler, "id@version".
class RegistrySegmentChecker : public SegmentChecker {
 public:
  RegistrySegmentChecker(const SchedulerRegistry& registry, const Fusion& original,
                         const std::vector<std::vector<int64_t>>& tensor_sizes,
                         const std::vector<ScalarValue>& scalars = {},
                         const driver::DeviceProperties& device = driver::h100Properties())
      : registry_(registry), device_(device) {
    validateAndBindArguments(original,
                             contiguousRuntimeInfo(original, tensor_sizes, scalars).arguments,
                             "RegistrySegmentChecker", evaluator_);
  }

  std::optional<std::string> accepts(const Segment& segment) override {
    ++calls;
    const SchedulerChoice choice = registry_.choose(*segment.fusion, runtimeInfo(segment));
    if (!choice.accepted()) return std::nullopt;
    const std::string name = choice.scheduler->id + "@" + choice.scheduler->version;
    summaries_[keyOf(segment)] = choice.summary;
    return name;
  }

  std::string refusalReason(const Segment& segment) override {
    return registry_.choose(*segment.fusion, runtimeInfo(segment)).describeAttempts();
  }

  /// The params summary of the choice that accepted `segment` (same Exprs and outputs), or "".
  std::string summary(const Segment& segment) const {
    auto it = summaries_.find(keyOf(segment));
    return it == summaries_.end() ? "" : it->second;
  }

  /// The runtime info of `segment` for the original's sizes.
  SchedulerRuntimeInfo runtimeInfo(const Segment& segment) {
    std::vector<std::vector<int64_t>> sizes;
    std::vector<ScalarValue> scalars;
    for (const Val* input : segment.inputs) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr) {
        scalars.push_back(evaluator_.evaluateOrThrow(input, "scalar input " + input->name()));
        continue;
      }
      sizes.push_back(sizesOf(*tv));
    }
    return contiguousRuntimeInfo(*segment.fusion, sizes, scalars, device_);
  }

  /// The sizes of an original tensor (its user-visible dims) for the original's sizes.
  std::vector<int64_t> sizesOf(const TensorView& tv) {
    std::vector<int64_t> shape;
    for (const IterDomain* id : tv.logicalNoReductions()) {
      shape.push_back(
          toInt64(evaluator_.evaluateOrThrow(id->logicalExtent(), "an extent of " + tv.name())));
    }
    return shape;
  }

  int64_t calls = 0;

 private:
  static std::vector<int64_t> keyOf(const Segment& segment) {
    std::vector<int64_t> key;
    for (const Expr* expr : segment.exprs) key.push_back(expr->id());
    key.push_back(-1);
    for (const Val* output : segment.outputs) key.push_back(output->id());
    return key;
  }

  const SchedulerRegistry& registry_;
  driver::DeviceProperties device_;
  ExpressionEvaluator evaluator_;
  std::map<std::vector<int64_t>, std::string> summaries_;
};

}  // namespace braze::test
