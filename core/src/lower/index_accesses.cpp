// index-accesses: every tensor access gets its element offset, computed in the loop nest of
// its statement (see index_compute.h):
//
//   T2[i2 * T0.size[1] + i3] = T0.data[i2 * T0.stride[0] + i3] + T1.data[i3]
//
// Registers may only be read by the threads that wrote them; reading a register tensor across
// a thread or block dim is refused here, where both sides' indices are known.

#include "lower/index_compute.h"
#include "lower/passes.h"

namespace braze::lower {

namespace {

class Indexer {
 public:
  explicit Indexer(const LowerContext& ctx) : ctx_(ctx) {}

  void run(kir::Scope& scope) {
    for (kir::StmtPtr& stmt : scope) {
      if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
        run(loop->body);
      } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
        run(branch->then_body);
        run(branch->else_body);
      } else if (auto* op = stmt->dynCast<kir::TensorOp>()) {
        index(*op);
      } else if (auto* init = stmt->dynCast<kir::InitOp>()) {
        const IndexMap map(ctx_, init->nest);
        init->output.offset = map.outputOffset(init->output.tv);
      } else if (auto* red = stmt->dynCast<kir::ReductionOp>()) {
        index(*red);
      }
    }
  }

 private:
  void index(kir::TensorOp& op) {
    const IndexMap map(ctx_, op.nest);
    op.output.offset = map.outputOffset(op.output.tv);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      kir::Operand& operand = op.inputs[i];
      if (operand.kind == kir::Operand::Kind::Index) {
        operand.index = linearPosition(map, op.output.tv);
        continue;
      }
      if (operand.kind != kir::Operand::Kind::Tensor) continue;
      indexOperand(map, *op.expr, i, operand, op.output.tv);
    }
  }

  // The row-major linear index of the element written here, over `out`'s logical dims
  // (i0 * e1 * e2 + i1 * e2 + i2): what iota and the random factories compute from, whatever
  // the loop structure and wherever `out` is stored.
  kir::Value linearPosition(const IndexMap& map, const TensorView* out) const {
    const std::vector<kir::Value> logical = map.outputLogical(out);
    const std::vector<IterDomain*> dims = out->logicalNoReductions();
    BRAZE_INTERNAL_CHECK(logical.size() == dims.size())
        << "lowering: " << out->name() << " is made by a factory but has reduction dims";
    kir::Value position = kir::constant(0);
    for (size_t d = 0; d < dims.size(); ++d) {
      position = position * ctx_.extentOf(dims[d]) + logical[d];
    }
    return position;
  }

  void index(kir::ReductionOp& op) {
    const IndexMap map(ctx_, op.nest);
    for (kir::TensorAccess& access : op.outputs) access.offset = map.outputOffset(access.tv);
    indexOperand(map, *op.expr, 0, op.input, op.outputs[0].tv);
  }

  void indexOperand(const IndexMap& map, const Expr& expr, size_t input, kir::Operand& operand,
                    const TensorView* consumer) {
    const IndexMap::ProducerIndex at = map.producerLogical(expr, input);
    operand.access.offset = map.offsetOf(operand.access.tv, at.logical);
    operand.guard = at.guard;
    checkThreadMapping(map, operand.access.tv, at.logical, consumer);
    operand.cross_thread = readsAcrossThreads(map, operand.access.tv);
  }

  // Whether a thread may read an element another thread of its block wrote: unless the
  // producer has an axis on every thread dim of the launch, read at this thread's own index.
  bool readsAcrossThreads(const IndexMap& map, const TensorView* producer) const {
    if (ctx_.memoryOf(producer) == MemoryType::Local) return false;
    for (ParallelType type : {ParallelType::TIDx, ParallelType::TIDy, ParallelType::TIDz}) {
      if (!ctx_.launchDim(type).used) continue;
      bool own = false;
      for (const IterDomain* id : producer->loop()) {
        if (id->parallelType() != type || id->isReduction()) continue;
        auto index = map.find(id);
        own = index && *index == ctx_.parallelIndex(type);
      }
      if (!own) return true;
    }
    return false;
  }

  // A register tensor read by another thread (or a shared one by another block) would read
  // someone else's storage. The producer's parallel axes must have the reader's own index.
  void checkThreadMapping(const IndexMap& map, const TensorView* producer,
                          const std::vector<kir::Value>& logical, const TensorView* consumer) {
    const MemoryType memory = ctx_.memoryOf(producer);
    (void)logical;
    if (memory == MemoryType::Global) {
      checkGlobalBuffer(map, producer, consumer);
      return;
    }
    for (int64_t j = 0; j < producer->nLoopDims(); ++j) {
      const IterDomain* id = producer->loopAxis(j);
      const ParallelType type = id->parallelType();
      const bool private_dim =
          memory == MemoryType::Local ? (isThreadDim(type) || isBlockDim(type)) : isBlockDim(type);
      if (!private_dim || id->isReduction() || id->isBroadcast()) continue;
      auto index = map.find(id);
      if (!index) continue;
      BRAZE_USER_CHECK(*index == ctx_.parallelIndex(type))
          << "lowering: " << producer->name() << " is in " << toString(memory) << " memory but "
          << consumer->name() << " reads it across " << type << " (" << describeAxis(producer, j)
          << " is read at " << index->toString() << " instead of "
          << ctx_.parallelIndex(type).toString() << "); "
          << (memory == MemoryType::Local ? "put it in shared memory" : "put it in global memory")
          << " or parallelize the reader's matching axis the same way";
    }
  }

  // A global tensor the kernel writes (an intermediate, or an output it also reads) is visible
  // to every block, but nothing orders one block's writes before another block's reads: each
  // block must read what it wrote itself.
  void checkGlobalBuffer(const IndexMap& map, const TensorView* producer,
                         const TensorView* consumer) {
    if (ctx_.fusion().isInput(producer)) return;
    for (ParallelType type : {ParallelType::BIDx, ParallelType::BIDy, ParallelType::BIDz}) {
      if (!ctx_.launchDim(type).used) continue;
      bool same_block = false;
      for (int64_t j = 0; j < producer->nLoopDims(); ++j) {
        const IterDomain* id = producer->loopAxis(j);
        if (id->parallelType() != type) continue;
        auto index = map.find(id);
        same_block = index && *index == ctx_.parallelIndex(type);
      }
      BRAZE_USER_CHECK(same_block)
          << "lowering: " << producer->name() << " is written to global memory by this kernel and "
          << consumer->name() << " reads it from other blocks than the one that wrote it (along "
          << type
          << "); that needs a grid-wide synchronization, which generated kernels do not "
             "have. Parallelize both tensors' matching axes with "
          << type << " or split the fusion into two kernels";
    }
  }

  const LowerContext& ctx_;
};

// Register arrays stay in registers only when every index into them is a compile-time
// constant: a short constant loop that indexes one is unrolled.
bool indexesRegisters(const kir::Scope& scope, const kir::Value& index, const LowerContext& ctx) {
  bool found = false;
  auto check = [&](const kir::TensorAccess& a) {
    if (a.tv != nullptr && a.offset.defined() && ctx.memoryOf(a.tv) == MemoryType::Local &&
        kir::dependsOn(a.offset, index))
      found = true;
  };
  kir::forEachStmt(scope, [&](const kir::Stmt& stmt) {
    if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
      check(op->output);
      for (const kir::Operand& o : op->inputs) check(o.access);
    } else if (const auto* red = stmt.dynCast<kir::ReductionOp>()) {
      for (const kir::TensorAccess& a : red->outputs) check(a);
      check(red->input.access);
    } else if (const auto* init = stmt.dynCast<kir::InitOp>()) {
      check(init->output);
    }
  });
  return found;
}

void unrollRegisterLoops(kir::Scope& scope, const LowerContext& ctx) {
  constexpr int64_t kMaxUnroll = 16;
  for (kir::StmtPtr& stmt : scope) {
    if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
      const auto extent = loop->extent.constantValue();
      if (!loop->unroll && extent && *extent <= kMaxUnroll &&
          indexesRegisters(loop->body, loop->index, ctx))
        loop->unroll = true;
      unrollRegisterLoops(loop->body, ctx);
    } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      unrollRegisterLoops(branch->then_body, ctx);
      unrollRegisterLoops(branch->else_body, ctx);
    }
  }
}

}  // namespace

kir::Kernel indexAccesses(kir::Kernel kernel, const LowerContext& ctx) {
  Indexer(ctx).run(kernel.body);
  unrollRegisterLoops(kernel.body, ctx);
  return kernel;
}

}  // namespace braze::lower
