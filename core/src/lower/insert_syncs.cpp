// insert-syncs: __syncthreads() between a write of shared memory (or of a global
// intermediate) and a later read of it by other threads (RAW), and between a read and a later
// overwrite (WAR), including across iterations of an enclosing loop:
//
//   for i in ...:
//     T3_smem[tidx] = T0.data[...]
//     __syncthreads();                   RAW: T4 reads what other threads wrote
//     T4[...] = T3_smem[31 - tidx]
//     __syncthreads();                   WAR: the next iteration overwrites T3_smem
//
// Barriers go between statements of a scope, never inside a predicated statement, so every
// thread reaches them. Block and grid reductions synchronize internally and count as barriers.

#include <set>

#include "lower/passes.h"

namespace braze::lower {

namespace {

struct Accesses {
  std::set<const TensorView*> reads;
  std::set<const TensorView*> writes;
  bool barrier = false;  // contains a synchronizing reduction
};

class SyncInserter {
 public:
  explicit SyncInserter(const LowerContext& ctx) : ctx_(ctx) {}

  void run(kir::Scope& scope) { visit(scope); }

 private:
  // Shared memory, and global tensors the kernel writes (intermediates, and outputs it also
  // reads) when several threads of a block exist to exchange them.
  bool tracked(const TensorView* tv) const {
    if (ctx_.memoryOf(tv) == MemoryType::Shared) return true;
    const bool threads = ctx_.launchDim(ParallelType::TIDx).used ||
                         ctx_.launchDim(ParallelType::TIDy).used ||
                         ctx_.launchDim(ParallelType::TIDz).used;
    return threads && ctx_.memoryOf(tv) == MemoryType::Global && !ctx_.fusion().isInput(tv);
  }

  void collect(const kir::Stmt& stmt, Accesses& a) const {
    auto read = [&](const TensorView* tv) {
      if (tracked(tv)) a.reads.insert(tv);
    };
    auto write = [&](const TensorView* tv) {
      if (tracked(tv)) a.writes.insert(tv);
    };
    if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
      write(op->output.tv);
      for (const kir::Operand& o : op->inputs)
        if (o.kind == kir::Operand::Kind::Tensor && o.cross_thread) read(o.access.tv);
    } else if (const auto* init = stmt.dynCast<kir::InitOp>()) {
      write(init->output.tv);
    } else if (const auto* red = stmt.dynCast<kir::ReductionOp>()) {
      // The accumulator is read and written by the thread that owns it.
      for (const kir::TensorAccess& out : red->outputs) write(out.tv);
      if (!red->finish && red->input.cross_thread) read(red->input.access.tv);
      if (red->block.any() || red->grid.any()) a.barrier = true;
    } else if (const auto* copy = stmt.dynCast<kir::VectorCopy>()) {
      write(copy->dst.tv);
      read(copy->src.tv);
    } else if (const auto* loop = stmt.dynCast<kir::ForLoop>()) {
      for (const kir::StmtPtr& s : loop->body) collect(*s, a);
    } else if (const auto* branch = stmt.dynCast<kir::IfThenElse>()) {
      for (const kir::StmtPtr& s : branch->then_body) collect(*s, a);
      for (const kir::StmtPtr& s : branch->else_body) collect(*s, a);
    }
  }

  static bool intersects(const std::set<const TensorView*>& a,
                         const std::set<const TensorView*>& b) {
    for (const TensorView* tv : a)
      if (b.count(tv)) return true;
    return false;
  }

  static kir::StmtPtr makeSync(const std::string& reason) {
    auto sync = std::make_unique<kir::Sync>();
    sync->reason = reason;
    return sync;
  }

  void clear() {
    written_.clear();
    read_.clear();
  }

  void visit(kir::Scope& scope) {
    kir::Scope out;
    for (kir::StmtPtr& stmt : scope) {
      Accesses a;
      collect(*stmt, a);
      if (intersects(a.reads, written_)) {
        out.push_back(makeSync("read after write"));
        clear();
      } else if (intersects(a.writes, read_)) {
        out.push_back(makeSync("write after read"));
        clear();
      }
      if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
        visit(loop->body);
        // The next iteration's first accesses follow this iteration's last ones.
        Accesses body;
        for (const kir::StmtPtr& s : loop->body) collect(*s, body);
        const bool iterates = loop->extent.constantValue().value_or(2) > 1;
        if (iterates && (intersects(written_, body.reads) || intersects(read_, body.writes))) {
          loop->body.push_back(makeSync("next iteration"));
          clear();
        }
      } else {
        if (a.barrier) clear();
        written_.insert(a.writes.begin(), a.writes.end());
        read_.insert(a.reads.begin(), a.reads.end());
      }
      out.push_back(std::move(stmt));
    }
    scope = std::move(out);
  }

  const LowerContext& ctx_;
  std::set<const TensorView*> written_;
  std::set<const TensorView*> read_;
};

}  // namespace

kir::Kernel insertSyncs(kir::Kernel kernel, const LowerContext& ctx) {
  SyncInserter(ctx).run(kernel.body);
  return kernel;
}

}  // namespace braze::lower
