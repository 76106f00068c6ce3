#pragma once

// What every lowering pass may read: the scheduled fusion, the options, the IterDomain graph
// and the decisions that follow from the schedule alone (memory of each tensor, kernel
// parameters, launch sizes, allocation layouts). Built once before the first pass.

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "braze/lower/kernel_ir.h"
#include "braze/lower/lower.h"
#include "lower/id_graph.h"

namespace braze::lower {

/// Which loop axes of a Local or Shared tensor are stored, and how: row-major over
/// `positions` (indices into the tensor's loop domain).
struct AllocationLayout {
  std::vector<int64_t> positions;
  std::vector<kir::Value> extents;
  std::vector<kir::Value> strides;
  kir::Value size;
  /// Shared tensors: `size` as a fusion scalar, which the launch evaluates when the size is
  /// symbolic (the tensor then lives in dynamic shared memory; see allocate.cpp).
  const Val* size_at_launch = nullptr;
};

class LowerContext {
 public:
  /// `fusion` is the scheduled fusion; `mutable_fusion` the same fusion, to which lowering adds
  /// the scalar Vals of launch sizes and checks.
  LowerContext(const Fusion& fusion, Fusion& mutable_fusion, const LowerOptions& options);

  const Fusion& fusion() const { return fusion_; }
  Fusion& mutableFusion() const { return mutable_fusion_; }
  const LowerOptions& options() const { return options_; }
  const IdGraph& graph() const { return *graph_; }
  /// The tensor Exprs of the kernel, in topological order.
  const std::vector<const Expr*>& exprs() const { return exprs_; }

  /// Global for fusion inputs and outputs, the scheduled memory type otherwise.
  MemoryType memoryOf(const TensorView* tv) const;
  /// Whether `split` divides its input evenly: by constant extents, or because a vector copy
  /// between global memory and registers splits the same extent by the same width, which the
  /// launch checks (vectorize-accesses records "extent % width == 0").
  bool dividesEvenly(const Expr& split) const;
  /// Inputs, outputs and global intermediates, in parameter order.
  const std::vector<kir::Parameter>& parameters() const { return parameters_; }
  /// Position of `tv` among parameters(), or -1.
  int64_t parameterOf(const TensorView* tv) const;

  /// The kernel-side value of an integer fusion scalar: a constant, the size of a tensor
  /// parameter, a scalar parameter, or an expression of those. Unknown scalars are an Error.
  kir::Value scalarValue(const Val* scalar) const;
  /// The extent a loop over `id` runs (the expanded extent of an expanded broadcast).
  kir::Value extentOf(const IterDomain* id) const;
  /// The same extent as a fusion scalar (the launch evaluates it).
  const Val* extentValOf(const IterDomain* id) const;
  /// threadIdx/blockIdx of `type` as an index; 0 when the kernel does not use that dim.
  kir::Value parallelIndex(ParallelType type) const;
  const kir::LaunchDim& launchDim(ParallelType type) const;
  const std::array<kir::LaunchDim, 6>& launch() const { return launch_; }

  /// Element strides of a global tensor's user-visible dims: real strides for inputs
  /// (folded into sizes where the layout is contiguous), row-major for outputs and buffers.
  std::vector<kir::Value> globalStrides(const TensorView* tv) const;
  /// Layout of a Local or Shared intermediate.
  const AllocationLayout& layoutOf(const TensorView* tv) const;

  /// Kernel-side names of symbolic scalars (scalar inputs and tensor sizes).
  const std::unordered_map<const Val*, std::string>& scalarNames() const { return scalar_names_; }

  /// Index type as the kernel spells it.
  DataType indexType() const { return options_.index_type; }

 private:
  void collectVectorSplits();
  void collectParameters();
  void nameSizes();
  void chooseExtents();
  void computeLaunch();

  const Fusion& fusion_;
  Fusion& mutable_fusion_;
  const LowerOptions& options_;
  std::vector<const Expr*> exprs_;
  std::unique_ptr<IdGraph> graph_;
  // (exact group of the split input, width) of every vector copy's split.
  std::vector<std::pair<int64_t, int64_t>> vector_splits_;
  std::vector<kir::Parameter> parameters_;
  std::unordered_map<const TensorView*, int64_t> parameter_of_;
  std::unordered_map<const Val*, std::string> scalar_names_;
  // Scalar inputs that are no tensor's extent: they may be negative (a select index).
  std::unordered_set<const Val*> signed_scalars_;
  // One extent per exact group: mapped IterDomains have equal extents at run time, and one
  // spelling lets index arithmetic fold (a stride of one tensor against a merge of another).
  std::unordered_map<int64_t, const Val*> group_extent_;
  std::array<kir::LaunchDim, 6> launch_;
  std::array<kir::Value, 6> parallel_index_;
  mutable std::unordered_map<const Val*, kir::Value> scalar_values_;
  mutable std::map<const TensorView*, AllocationLayout> layouts_;
};

/// "T3 axis 2 (i7{128}:TIDx)": how lowering errors name a loop axis.
std::string describeAxis(const TensorView* tv, int64_t axis);

}  // namespace braze::lower
