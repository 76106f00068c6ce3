#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/lower/kir_value.h"

namespace braze::kir {

/// Kernel IR: the loop nests, allocations, predicates and synchronizations of one kernel, with
/// every index made explicit as a kir::Value. The tensor math of each statement is still the
/// scheduled fusion's Expr; codegen prints both.
///
///   for i3 in 0..T0.size[0]:            ForLoop
///     T4[0] = 0                          InitOp (accumulator)
///     for i5 in 0..T0.size[1]:
///       T4[0] = T4[0] + T0[i3 * T0.stride[0] + i5]       ReductionOp
///     T2[i3] = T4[0]                     TensorOp (set)

enum class StmtKind : uint8_t {
  ForLoop,
  IfThenElse,
  Allocate,
  TensorOp,
  InitOp,
  ReductionOp,
  VectorCopy,
  Sync,
  Comment,
};

class Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
/// A sequence of statements (a loop body, a branch, the kernel body).
using Scope = std::vector<StmtPtr>;

/// One position of the loop nest a statement executes in: the loop IterDomain that stands for
/// it (the loop group's representative) and the index it has there (a loop variable, a thread
/// or block index, or 0).
struct NestPosition {
  const IterDomain* id = nullptr;
  Value index;
};

/// A statement. Statements form trees owned through StmtPtr; `clone` deep-copies.
class Stmt {
 public:
  explicit Stmt(StmtKind kind) : kind_(kind) {}
  Stmt(const Stmt&) = default;
  Stmt& operator=(const Stmt&) = default;
  virtual ~Stmt() = default;

  StmtKind kind() const { return kind_; }
  virtual StmtPtr clone() const = 0;

  template <typename T>
  T* as() {
    BRAZE_INTERNAL_CHECK(kind_ == T::kKind) << "kir: statement is not the requested kind";
    return static_cast<T*>(this);
  }
  template <typename T>
  const T* as() const {
    BRAZE_INTERNAL_CHECK(kind_ == T::kKind) << "kir: statement is not the requested kind";
    return static_cast<const T*>(this);
  }
  template <typename T>
  T* dynCast() {
    return kind_ == T::kKind ? static_cast<T*>(this) : nullptr;
  }
  template <typename T>
  const T* dynCast() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 private:
  StmtKind kind_;
};

Scope cloneScope(const Scope& scope);

template <typename Derived, StmtKind K>
class StmtBase : public Stmt {
 public:
  static constexpr StmtKind kKind = K;
  StmtBase() : Stmt(K) {}
  StmtPtr clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

/// One element of a tensor: global tensors are addressed through their parameter's data
/// pointer, shared and local ones through their allocation. `offset` is in elements.
struct TensorAccess {
  const TensorView* tv = nullptr;
  Value offset;
};

/// An input of a TensorOp or ReductionOp.
struct Operand {
  enum class Kind : uint8_t {
    Tensor,  ///< `access`
    Scalar,  ///< a fusion scalar `scalar` (constant or named)
    Index,   ///< an index quantity used as data, `index` (iota's position)
  };
  Kind kind = Kind::Scalar;
  TensorAccess access;
  const Val* scalar = nullptr;
  Value index;
  /// When defined, the operand is only read where `guard` holds (pad, cat).
  Value guard;
  /// Tensor: the element may have been written by another thread of the block (set by
  /// index-accesses; barriers are needed only for such reads).
  bool cross_thread = true;
};

/// A scan's running value, carried from one iteration of the scan's loop to the next: a
/// register named `name`, declared and set to the identity of `scan` (a Cumsum, Cumprod,
/// Cummax or Cummin Expr) right before the loop, in the compute type of the scan's output.
struct CarriedValue {
  std::string name;
  const Expr* scan = nullptr;
};

/// `for (IndexT index = 0; index < extent; ++index) body`, or from extent - 1 down to 0 when
/// `reversed` (IterDomain::isReversed). Thread- and block-parallel dimensions have no loop;
/// loops of extent 1 are never built.
class ForLoop : public StmtBase<ForLoop, StmtKind::ForLoop> {
 public:
  Value index;
  Value extent;
  ParallelType parallel_type = ParallelType::Serial;
  const IterDomain* id = nullptr;
  bool unroll = false;  ///< #pragma unroll
  bool reversed = false;
  /// The running values of the scans along this loop (see TensorOp::accumulator).
  std::vector<CarriedValue> carried;
  Scope body;

  ForLoop() = default;
  ForLoop(const ForLoop& other);
};

/// Why an IfThenElse exists, so that later passes can tell their predicates apart.
enum class PredicateKind : uint8_t {
  Bounds,    ///< non-divisible splits, thread dims wider than an extent (may be unswitched)
  Thread,    ///< one thread (or block) of a redundant group writes
  Unswitch,  ///< hoisted bounds of a whole nest
};

class IfThenElse : public StmtBase<IfThenElse, StmtKind::IfThenElse> {
 public:
  Value predicate;
  PredicateKind predicate_kind = PredicateKind::Bounds;
  Scope then_body;
  Scope else_body;

  IfThenElse() = default;
  IfThenElse(const IfThenElse& other);
};

/// Storage for a Local (registers) or Shared intermediate, valid for the rest of its scope.
class Allocate : public StmtBase<Allocate, StmtKind::Allocate> {
 public:
  const TensorView* tv = nullptr;
  MemoryType memory = MemoryType::Local;
  DataType dtype = DataType::Float32;
  Value size;  ///< elements (a constant for Local)
  /// Shared tensors in dynamic shared memory: the byte offset of this tensor in it (undefined
  /// for a static __shared__ array; Kernel::dynamic_shared_tensor_bytes says which).
  Value dynamic_offset;
};

/// `output = op(inputs)` at one point of the iteration space, for every op that is not a
/// reduction: elementwise, casts, set, broadcast, expand, permute, squeeze, reshape, slice,
/// pad, cat, select, index_select, gather, full, iota, and one step of a scan:
///
///   for i4 in 0..T0.size[1]:        carries scan7 = 0 (ForLoop::carried)
///     scan7 = scan7 + T0[...]        TensorOp (cumsum), accumulator "scan7"
///     T1[...] = scan7
class TensorOp : public StmtBase<TensorOp, StmtKind::TensorOp> {
 public:
  const Expr* expr = nullptr;
  TensorAccess output;
  std::vector<Operand> inputs;
  std::vector<NestPosition> nest;
  /// A scan step: the running value its loop carries, combined with the input and stored.
  /// Empty for other ops, and for a scan whose axis opens no loop (extent 1: the step stores
  /// its input).
  std::string accumulator;
};

/// An accumulator set to its reduction's initial value (0 for sum, -inf for max, (0, 0, 0) for
/// Welford; `output_index` picks which Welford output).
class InitOp : public StmtBase<InitOp, StmtKind::InitOp> {
 public:
  const Expr* expr = nullptr;
  int64_t output_index = 0;
  TensorAccess output;
  std::vector<NestPosition> nest;
};

/// Bit set over the thread (TIDx/y/z) or block (BIDx/y/z) dims a reduction crosses.
struct ParallelMask {
  bool x = false;
  bool y = false;
  bool z = false;
  bool any() const { return x || y || z; }
  bool operator==(const ParallelMask&) const = default;
};

/// `outputs = op(outputs, input)`: one step of a reduction (Sum, Prod, Max, Min) or Welford
/// (outputs avg, m2, n). Serial when no mask is set. With `block` set the step is a block
/// all-reduce across those thread dims; with `grid` set a grid reduction across those block
/// dims through workspace parameter `workspace`, after which only the block that finishes
/// (`grid_flag` true) holds the result.
class ReductionOp : public StmtBase<ReductionOp, StmtKind::ReductionOp> {
 public:
  const Expr* expr = nullptr;
  std::vector<TensorAccess> outputs;
  Operand input;
  /// Block and grid reductions run in every thread (they synchronize); a thread whose element
  /// is out of bounds contributes the initial value instead. Undefined: always in bounds.
  Value input_predicate;
  /// Block and grid reductions: who stores the result (in-bounds owners, one thread per
  /// element of a global or shared output). Undefined: everyone.
  Value write_predicate;
  ParallelMask block;
  ParallelMask grid;
  int64_t workspace = -1;
  /// A grid reduction inside serial loops over iteration axes (one per register element of a
  /// column partial): the linear index of those loops, picking this iteration's own region of
  /// the workspace (partials and semaphores). Undefined: the only region.
  Value workspace_region;
  std::string grid_flag;
  /// The finishing step of a block/grid reduction whose serial part ran first: each thread's
  /// partial result is already in `outputs`; they are reduced across the masks and the result
  /// stored back (`input` is unused).
  bool finish = false;
  /// A block reduction whose all-reduce runs together with the next statement's, a block
  /// reduction of the same op, value type and thread dims (group-block-reductions): one
  /// blockReduceGroup call for the run, so the block meets once for all of them.
  bool grouped_with_next = false;
  std::vector<NestPosition> nest;
};

/// A `width`-element vector copy between global memory and an aligned local/shared array, as
/// one 16-byte (or narrower) access.
class VectorCopy : public StmtBase<VectorCopy, StmtKind::VectorCopy> {
 public:
  TensorAccess dst;
  TensorAccess src;
  int64_t width = 1;
  const Expr* expr = nullptr;  ///< the Set it came from
  /// A load through the read-only data path (ld.global.nc): its source is an input the fusion
  /// reads that way (Fusion::setReadOnlyLoads).
  bool read_only = false;
};

/// __syncthreads().
class Sync : public StmtBase<Sync, StmtKind::Sync> {
 public:
  std::string reason;
};

class Comment : public StmtBase<Comment, StmtKind::Comment> {
 public:
  std::string text;
};

/// A kernel parameter, in order.
struct Parameter {
  enum class Kind : uint8_t { InputTensor, OutputTensor, GlobalBuffer, InputScalar, Workspace };
  Kind kind = Kind::InputTensor;
  const Val* val = nullptr;
  int64_t fusion_position = -1;
  /// Workspace only: bytes, as an Index scalar of the fusion.
  const Val* workspace_bytes = nullptr;
  std::string name;  ///< "T0", "s2", "workspace0"
};

/// One of the six launch dimensions.
struct LaunchDim {
  bool used = false;
  /// The launch size as a fusion scalar (evaluated by the executor).
  const Val* size = nullptr;
  /// The same size as the kernel reads it (a constant when known, else blockDim/gridDim).
  Value size_in_kernel;
};

/// A lowered kernel: body, parameters, launch geometry and what the launch must check.
struct Kernel {
  const Fusion* fusion = nullptr;
  Scope body;
  std::vector<Parameter> parameters;
  /// BIDx, BIDy, BIDz, TIDx, TIDy, TIDz.
  std::array<LaunchDim, 6> launch;
  DataType index_type = DataType::Int32;
  std::vector<std::pair<const Val*, std::string>> launch_checks;
  struct Alignment {
    size_t parameter;
    int64_t bytes;
    std::vector<int64_t> stride_dims;
  };
  std::vector<Alignment> alignments;
  /// Kernel-side names of the fusion's symbolic scalars: scalar inputs ("s2") and tensor
  /// sizes ("T0.size[1]").
  std::unordered_map<const Val*, std::string> scalar_names;
  /// Bytes of shared memory the block reductions need per thread (0: none).
  int64_t reduction_smem_bytes_per_thread = 0;
  /// Bytes of dynamic shared memory the shared tensors take, before the block reductions'
  /// scratch, as a fusion scalar the launch evaluates, and as the kernel reads it; nullptr when
  /// shared tensors (if any) are static arrays. Set by the allocate pass.
  const Val* dynamic_shared_tensor_bytes = nullptr;
  Value dynamic_shared_tensor_bytes_in_kernel;
  /// The fusion's launch bounds (Fusion::setLaunchBounds), printed as __launch_bounds__.
  std::optional<LaunchBounds> launch_bounds;
  /// Every block resident at once (Fusion::setCooperativeLaunch): launched cooperatively, and
  /// grouped grid reductions finish across the blocks (gridReduceGroupResident).
  bool cooperative = false;
  /// Counter for fresh symbol names.
  int64_t next_name = 0;

  Kernel() = default;
  Kernel(Kernel&&) = default;
  Kernel& operator=(Kernel&&) = default;
};

/// Index of a thread/block parallel type in Kernel::launch (BIDx..TIDz), or -1.
int launchSlot(ParallelType type);

/// Threads per block when the schedule fixes every thread dim (their product), nullopt when one
/// is known only at launch.
std::optional<int64_t> constantBlockThreads(const Kernel& kernel);

/// Calls `visit` on every statement of `scope`, depth first, parents before children.
void forEachStmt(const Scope& scope, const std::function<void(const Stmt&)>& visit);

}  // namespace braze::kir
