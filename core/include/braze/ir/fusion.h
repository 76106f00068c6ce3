#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "braze/ir/iter_domain.h"
#include "braze/ir/kernel_template.h"
#include "braze/ir/scalar.h"
#include "braze/ir/statement.h"
#include "braze/ir/tensor_view.h"

namespace braze {

class Fusion;

/// What a scheduler states about the kernel of a scheduled fusion so that the compiler can
/// budget registers (CUDA's `__launch_bounds__`): no block will have more than
/// `max_threads_per_block` threads, and `min_blocks_per_sm` blocks (0: no wish) should fit on
/// one SM at once, which caps registers per thread at 65536 / (max threads x min blocks).
struct LaunchBounds {
  int64_t max_threads_per_block = 0;
  int64_t min_blocks_per_sm = 0;
  bool operator==(const LaunchBounds&) const = default;
};

/// Old-to-new statement map produced by Fusion::clone.
class CloneMap {
 public:
  template <typename T>
  T* operator[](const T* old) const {
    if (old == nullptr) return nullptr;
    return static_cast<T*>(lookup(old));
  }
  /// Whether `old` has a copy.
  bool contains(const Statement* old) const { return map_.count(old) != 0; }

 private:
  friend class Fusion;
  Statement* lookup(const Statement* old) const;
  std::unordered_map<const Statement*, Statement*> map_;
};

/// A dataflow program over tensors and scalars. The Fusion owns every Statement (an arena:
/// statements are never freed before the Fusion) and numbers them densely in creation order.
///
/// Build a fusion with the op builders in braze/ops, starting from inputs made with
/// makeInputTensor / makeInputScalar, and mark results with addOutput.
class Fusion {
 public:
  Fusion() = default;
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;
  ~Fusion();

  /// Creates a statement owned by this fusion. The only way statements come to exist.
  template <typename T, typename... Args>
  T* create(Args&&... args) {
    auto* statement = new T(*this, std::forward<Args>(args)...);
    adopt(statement);
    return statement;
  }

  /// A constant scalar of the given dtype (bool, int64 or double as its category needs).
  Scalar* constant(ScalarValue value, DataType dtype);
  /// A constant of the Index dtype, the type of extents.
  Scalar* constantIndex(int64_t value) { return constant(value, DataType::Index); }

  void addInput(Val* input);
  void addOutput(Val* output);
  /// Puts `replacement` in `old`'s place among the outputs (cacheFork); an alias of `old`
  /// (aliasOutputToInput) moves with it.
  void replaceOutput(Val* old, Val* replacement);
  const std::vector<Val*>& inputs() const { return inputs_; }
  const std::vector<Val*>& outputs() const { return outputs_; }
  bool isInput(const Val* val) const;
  bool isOutput(const Val* val) const;
  /// Position of `input` among inputs(), or -1.
  int64_t inputIndex(const Val* input) const;

  /// Makes output `output` be written into the memory of input tensor `input` (an in-place
  /// update: an optimizer step, running statistics, a cache written by scatter). Both must be
  /// tensors of the same dtype and rank whose sizes agree at run time; `input` must be dense
  /// (contiguous in its allocation order), and `output` is then stored in that order. An input
  /// takes at most one output; a run returns the input itself for that output.
  void aliasOutputToInput(Val* output, Val* input);
  /// The input `output` is written into, or null.
  Val* aliasedInput(const Val* output) const;
  /// The output written into `input`, or null.
  Val* outputWrittenInto(const Val* input) const;
  /// (output, input) pairs, in the order they were made.
  const std::vector<std::pair<Val*, Val*>>& outputAliases() const { return aliases_; }

  /// Every Expr that contributes to an output, in a topological order that is deterministic:
  /// producers come before consumers, and otherwise creation order decides. Follows Expr
  /// inputs only; extent expressions are reached through TensorView domains (see
  /// `extentExprs`).
  std::vector<Expr*> exprs() const;
  /// Scalar Exprs that compute `val` (e.g. an extent), in topological order, stopping at
  /// constants and symbolic leaves.
  static std::vector<Expr*> scalarDefinitionChain(const Val* val);

  int64_t numStatements() const { return static_cast<int64_t>(statements_.size()); }
  Statement* statement(int64_t id) const { return statements_.at(static_cast<size_t>(id)).get(); }
  /// All TensorViews, in creation order.
  std::vector<TensorView*> allTensors() const;

  /// States the launch bounds of the fusion's kernel (part of its schedule): the generated
  /// kernel carries `__launch_bounds__(max_threads_per_block, min_blocks_per_sm)`, and a launch
  /// with a larger block is refused. Needs 1 <= max_threads_per_block <= 1024 and
  /// min_blocks_per_sm >= 0 (0: only the thread bound). Replaces bounds stated before.
  void setLaunchBounds(int64_t max_threads_per_block, int64_t min_blocks_per_sm = 0);
  /// The bounds setLaunchBounds stated, if any.
  const std::optional<LaunchBounds>& launchBounds() const { return launch_bounds_; }

  /// States that the fusion's kernel is compiled for `extent` (an input's symbolic extent)
  /// equal to `value` (part of its schedule: the sizes the plan was made for). Launch sizes
  /// that follow from it (threads per row of a row length) become constants of the kernel, so
  /// its block reductions unroll for its block instead of testing blockDim; a launch whose
  /// inputs have another extent is refused (those sizes need a schedule of their own).
  /// `value` >= 1; stating an extent again replaces its value.
  void assumeExtent(Scalar* extent, int64_t value);
  /// The extents assumeExtent stated, in order.
  const std::vector<std::pair<Scalar*, int64_t>>& assumedExtents() const {
    return assumed_extents_;
  }

  /// States that every block of the fusion's kernel must be resident at once (part of its
  /// schedule): the kernel is launched cooperatively, so the driver refuses a grid that cannot
  /// all be resident instead of letting blocks wait on blocks that never start, and its grouped
  /// grid reductions finish across all blocks after a grid barrier instead of in the last block
  /// to arrive. A schedule states it where its grid is at most the blocks its launch bounds keep
  /// resident on every SM.
  void setCooperativeLaunch(bool cooperative) { cooperative_launch_ = cooperative; }
  bool cooperativeLaunch() const { return cooperative_launch_; }

  /// States that the kernel reads tensor input `input` through the read-only data path (part of
  /// its schedule): its vector loads become ld.global.nc, which the compiler may move across the
  /// kernel's stores, so that a weight read beside an output's stores, or the next row read
  /// while this one is stored, is in flight early instead of waiting for each store. It costs
  /// registers where loads move ahead (their values live longer). `input` must be a tensor
  /// input that no output is written into (aliasOutputToInput): the path does not see the
  /// kernel's own writes.
  void setReadOnlyLoads(TensorView* input);
  /// Whether setReadOnlyLoads named `input`.
  bool readOnlyLoads(const Val* input) const;

  /// States that the kernel holds its register arrays of 2-byte elements (bf16, fp16) two to a
  /// 32-bit register (part of its schedule): each element is read out of the word that holds it.
  /// Otherwise the compiler splits a 16-byte vector of eight such elements into eight registers,
  /// twice the registers a row held in them is planned for.
  void setPackedHalfRegisters(bool packed) { packed_half_registers_ = packed; }
  bool packedHalfRegisters() const { return packed_half_registers_; }

  /// States that the kernel computes tensor `tv` as a value the C++ compiler cannot see through
  /// (part of its schedule): its assignments print as `braze::opaque(...)`, so an equal
  /// expression elsewhere in the kernel is not merged with what is computed from it. A schedule
  /// that recomputes a row's values after a reduction (recomputeFor) states it for the copied
  /// per-row values (a mean): otherwise the compiler sees the copy equal to the first chain and
  /// keeps the first pass's values (x - mean) alive across the reduction, in registers the plan
  /// did not count. `tv` must be a tensor of this fusion that is not an input.
  void setOpaqueToCompiler(TensorView* tv);
  /// Whether setOpaqueToCompiler named `tv`.
  bool opaqueToCompiler(const Val* tv) const;

  /// Makes `kernel` this fusion's kernel (part of its schedule, braze/ir/kernel_template.h):
  /// code generation uses it instead of lowering the fusion's loop nest. Its tensors must be
  /// this fusion's inputs and outputs, its launch values this fusion's scalars.
  void setKernelTemplate(KernelTemplate kernel);
  /// The template setKernelTemplate attached, or null.
  const KernelTemplate* kernelTemplate() const { return kernel_template_.get(); }

  /// A deep copy: same statements, ids, names, inputs, outputs, aliases, schedule (launch
  /// bounds, read-only loads, packed registers, opaque values, template).
  /// `map` (when given) receives the old-to-new statement map.
  std::unique_ptr<Fusion> clone(CloneMap* map = nullptr) const;

  /// What cloneSubset does with one chosen statement: return null to copy it, or a statement
  /// the hook created in `target` to stand for it (everything the hook's statement refers to
  /// must already be in `target`; `map` holds the copies of the chosen statements of smaller
  /// id).
  using CloneSubstitute =
      std::function<Statement*(const Statement& old, Fusion& target, const CloneMap& map)>;

  /// A new fusion holding copies of the chosen `statements` of this one (any order, duplicates
  /// ignored; recreated in id order and numbered densely), so that part of a fusion becomes a
  /// standalone fusion (a segment) without the rest. Every statement a copied one refers to (an
  /// Expr's inputs and outputs, a tensor's IterDomains, an IterDomain's extents) must be chosen
  /// too; a missing one is an internal error naming it. `substitute`, when given, is asked first
  /// for each chosen statement, in id order, and may return a statement it made in the target
  /// to stand for it (a fresh input tensor instead of a computed one): that statement is not
  /// copied, and copies that refer to it refer to the stand-in. The result has no inputs,
  /// outputs or launch bounds; `map` (when given) receives the old-to-new map.
  std::unique_ptr<Fusion> cloneSubset(std::span<const Statement* const> statements,
                                      const CloneSubstitute& substitute = {},
                                      CloneMap* map = nullptr) const;

 private:
  void adopt(Statement* statement);
  /// Copies `statements` (in id order) into `target`, asking `substitute` first, then connects
  /// the copies' domains and edges: the work of clone and cloneSubset.
  static void copyStatements(std::span<const Statement* const> statements,
                             const CloneSubstitute& substitute, Fusion& target, CloneMap& map);

  std::vector<std::unique_ptr<Statement>> statements_;
  std::vector<Val*> inputs_;
  std::vector<Val*> outputs_;
  int64_t num_tensors_ = 0;
  int64_t num_scalars_ = 0;
  int64_t num_iter_domains_ = 0;
  std::optional<LaunchBounds> launch_bounds_;
  std::vector<std::pair<Scalar*, int64_t>> assumed_extents_;
  bool cooperative_launch_ = false;
  bool packed_half_registers_ = false;
  std::vector<Val*> read_only_inputs_;
  std::vector<Val*> opaque_tensors_;
  std::vector<std::pair<Val*, Val*>> aliases_;  // (output, input)
  std::shared_ptr<const KernelTemplate> kernel_template_;
};

/// Describes a fusion input tensor. `sizes` gives each dimension: -1 for a size known only at
/// run time, 1 for a broadcast dimension, any other value for a size fixed at definition time.
/// `contiguity` (default: all true) and `allocation_order` (default: row-major, outermost
/// first) describe the memory layout the input will have.
struct TensorSpec {
  DataType dtype = DataType::Float32;
  std::vector<int64_t> sizes;
  std::vector<std::optional<bool>> contiguity = {};
  std::vector<int64_t> allocation_order = {};
};

/// Creates a TensorView for `spec`, adds it to the fusion's inputs and returns it.
TensorView* makeInputTensor(Fusion& fusion, const TensorSpec& spec);
/// Shorthand: a contiguous input of the given rank with every size symbolic.
TensorView* makeSymbolicTensor(Fusion& fusion, int64_t rank, DataType dtype = DataType::Float32);
/// Creates a symbolic scalar, adds it to the fusion's inputs and returns it.
Scalar* makeInputScalar(Fusion& fusion, DataType dtype);

}  // namespace braze
