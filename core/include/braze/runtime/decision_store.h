#pragma once

// What a FusionKernelRuntime decided, kept between processes: the segmentation of a fusion and
// each segment's scheduler and params, for one exact set of arguments on one kind of device.
// A warm process restores them instead of segmenting and asking the schedulers' heuristics
// (the kernels themselves come from the kernel store). libbraze_serde implements the store on
// disk (braze/serde/runtime_cache.h).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/runtime/kernel_recipe.h"

namespace braze {

struct RunContext;
struct RuntimeOptions;

/// The decisions of one runtime, in terms that survive the process: Exprs by their position in
/// the original fusion's exprs() (a topological order that structurally equal fusions share).
struct RuntimeDecisions {
  struct Segment {
    std::vector<int64_t> exprs;  ///< positions in fusion.exprs(), in the segment's order
    /// Each output of the segment: (position of the Expr that computes it, output slot).
    std::vector<std::pair<int64_t, int64_t>> outputs;
    std::string scheduler;      ///< "id@version"
    std::string plugin_sha256;  ///< of the plugin library that made the params
    std::vector<uint8_t> params;
    std::string summary;  ///< the params as the scheduler describes them
    /// The segment's kernel as a recipe over its inputs (absent: schedule and lower again).
    std::optional<KernelRecipe> kernel;

    bool operator==(const Segment&) const = default;
  };
  std::vector<Segment> segments;

  bool operator==(const RuntimeDecisions&) const = default;
};

/// The key of a runtime's decisions: SHA-256 over Braze's version and build (coreBuildId: a
/// rebuilt core starts its decisions afresh), the fusion's canonical form,
/// every argument (dtype, sizes and strides of a tensor with its data alignment, or a scalar's
/// value), the device's properties that schedulers read, and the runtime options. Plugins are
/// not in the key: a restored segment's plugin must still be the one whose sha256 it records.
std::string runtimeKey(const Fusion& fusion, const RunContext& context,
                       const RuntimeOptions& options);

/// Where FusionKernelRuntime looks before it segments (and keeps what it decided).
/// Implementations are safe to call from several threads at once.
class DecisionStore {
 public:
  virtual ~DecisionStore() = default;
  /// The decisions kept under `key`, or nullopt (absent, or an entry that fails the store's
  /// checks: logged, and replaced by the next insert). Never throws for a bad entry.
  virtual std::optional<RuntimeDecisions> find(const std::string& key) = 0;
  /// Keeps `decisions` under `key`; best effort (a failed write is logged).
  virtual void insert(const std::string& key, const RuntimeDecisions& decisions) = 0;
};

/// As defaultKernelStore (braze/runtime/kernel_store.h), for decisions.
std::shared_ptr<DecisionStore> defaultDecisionStore();
void setDefaultDecisionStore(std::shared_ptr<DecisionStore> store);
void registerDefaultDecisionStoreFactory(std::function<std::shared_ptr<DecisionStore>()> factory);

}  // namespace braze
