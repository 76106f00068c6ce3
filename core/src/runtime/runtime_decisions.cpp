// The runtime's decisions (segmentation, schedulers, params) as a decision store keeps them,
// and restoring them in a later process instead of segmenting and running heuristics.

#include <algorithm>
#include <iostream>
#include <unordered_map>

#include "braze/error.h"
#include "braze/runtime/decision_store.h"
#include "braze/runtime/fusion_kernel_runtime.h"

namespace braze {

RuntimeDecisions FusionKernelRuntime::decisions() const {
  std::unordered_map<const Expr*, int64_t> position;
  const std::vector<Expr*> exprs = fusion_.exprs();
  for (size_t i = 0; i < exprs.size(); ++i) position.emplace(exprs[i], static_cast<int64_t>(i));
  RuntimeDecisions decisions;
  for (size_t s = 0; s < segmented_.segments.size(); ++s) {
    const Segment& segment = segmented_.segments[s];
    RuntimeDecisions::Segment stored;
    for (const Expr* expr : segment.exprs) stored.exprs.push_back(position.at(expr));
    for (const Val* output : segment.outputs) {
      const Expr* definition = output->definition();
      const auto& outputs = definition->outputs();
      stored.outputs.emplace_back(
          position.at(definition),
          static_cast<int64_t>(std::find(outputs.begin(), outputs.end(), output) -
                               outputs.begin()));
    }
    const SchedulerChoice& choice = kernels_[s].choice;
    stored.scheduler = choice.scheduler->id + "@" + choice.scheduler->version;
    stored.plugin_sha256 =
        choice.scheduler->plugin ? choice.scheduler->plugin->manifest.sha256 : "";
    stored.params = choice.params;
    stored.summary = choice.summary;
    stored.kernel = kernels_[s].recipe;
    decisions.segments.push_back(std::move(stored));
  }
  return decisions;
}

std::optional<std::string> FusionKernelRuntime::restore(const RuntimeDecisions& decisions,
                                                        const RunContext& context) {
  const std::vector<Expr*> exprs = fusion_.exprs();
  if (decisions.segments.empty()) return "no segments";
  SegmentedFusion segmented;
  segmented.original = &fusion_;
  std::vector<SchedulerChoice> choices;
  std::vector<std::optional<KernelRecipe>> recipes;
  for (const RuntimeDecisions::Segment& stored : decisions.segments) {
    std::vector<const Expr*> members;
    for (int64_t at : stored.exprs) {
      if (at < 0 || at >= static_cast<int64_t>(exprs.size()))
        return "expression " + std::to_string(at) + " is not in the fusion";
      members.push_back(exprs[static_cast<size_t>(at)]);
    }
    std::vector<const Val*> outputs;
    for (const auto& [at, slot] : stored.outputs) {
      if (at < 0 || at >= static_cast<int64_t>(exprs.size()) || slot < 0 ||
          slot >= static_cast<int64_t>(exprs[static_cast<size_t>(at)]->outputs().size()))
        return "an output refers to no expression of the fusion";
      outputs.push_back(exprs[static_cast<size_t>(at)]->outputs()[static_cast<size_t>(slot)]);
    }
    // The scheduler of the same id that is tried first now (the same version if present).
    const size_t at = stored.scheduler.rfind('@');
    const std::string id = stored.scheduler.substr(0, at);
    const std::string old_version = at == std::string::npos ? "" : stored.scheduler.substr(at + 1);
    const SchedulerEntry* entry = nullptr;
    for (const SchedulerEntry* candidate : registry_.candidates()) {
      if (candidate->id != id) continue;
      if (entry == nullptr || candidate->version == old_version) entry = candidate;
    }
    if (entry == nullptr) return "scheduler " + stored.scheduler + " is not available";
    Segment segment;
    try {
      segment = extractSegment(fusion_, members, outputs);
    } catch (const Error& error) {
      return std::string("a segment cannot be rebuilt: ") + error.what();
    }
    SchedulerChoice choice;
    choice.scheduler = entry;
    const bool same_build = entry->version == old_version && entry->plugin &&
                            entry->plugin->manifest.sha256 == stored.plugin_sha256;
    if (same_build) {
      // The very library that chose: its answers would be the same, so it is not asked.
      choice.params = stored.params;
      choice.summary = stored.summary;
      recipes.push_back(stored.kernel);
    } else {
      // Another build of the scheduler rules on its old params; its kernels are made again.
      const SchedulerRuntimeInfo info = segmentInfo(segment, context);
      const BrazeReviewVerdict verdict =
          registry_.reviewParams(*entry, *segment.fusion, info, old_version, stored.params);
      if (verdict == BRAZE_REVIEW_UNSUPPORTED)
        return entry->id + "@" + entry->version + " no longer takes a segment that " +
               stored.scheduler + " scheduled";
      std::cerr << "braze: " << stored.scheduler
                << " was rebuilt or replaced since these decisions were kept; " << entry->id << "@"
                << entry->version
                << (verdict == BRAZE_REVIEW_KEEP ? " keeps its params" : " computes new params")
                << " and schedules the segment again\n";
      if (verdict == BRAZE_REVIEW_KEEP) {
        choice.params = stored.params;
        choice.summary = stored.summary;
      } else {
        choice = registry_.chooseWith(*entry, *segment.fusion, info);
        if (!choice.accepted())
          return entry->id + "@" + entry->version +
                 " now declines a segment:" + choice.describeAttempts();
      }
      recipes.emplace_back();
    }
    segment.id = static_cast<int64_t>(segmented.segments.size());
    segment.scheduler = entry->id + "@" + entry->version;
    segmented.segments.push_back(std::move(segment));
    choices.push_back(std::move(choice));
  }
  segmented_ = std::move(segmented);
  kernels_.resize(choices.size());
  for (size_t s = 0; s < choices.size(); ++s) {
    kernels_[s].choice = std::move(choices[s]);
    kernels_[s].recipe = std::move(recipes[s]);
  }
  restored_ = true;
  return std::nullopt;
}

}  // namespace braze
