// verifyKernel: invariants of kernel IR that every pass must keep. Run between passes in debug
// builds (and when LowerOptions::verify asks), so that a pass that breaks one is named at once
// instead of producing a kernel that fails to compile or computes garbage.

#include "lower/verify_kernel.h"

#include <set>

namespace braze::lower {

namespace {

class Verifier {
 public:
  Verifier(const LowerContext& ctx, std::string_view after, bool indexed)
      : ctx_(ctx), after_(after), indexed_(indexed) {}

  void run(const kir::Scope& scope) {
    std::vector<std::set<const TensorView*>> allocated = {{}};
    visit(scope, allocated, /*predicated=*/false);
  }

 private:
  void check(bool condition, const std::string& what) {
    BRAZE_INTERNAL_CHECK(condition) << "kernel IR after " << after_ << ": " << what;
  }

  void access(const kir::TensorAccess& a,
              const std::vector<std::set<const TensorView*>>& allocated) {
    if (a.tv == nullptr) return;
    if (indexed_) check(a.offset.defined(), a.tv->name() + " is accessed without an offset");
    if (ctx_.memoryOf(a.tv) == MemoryType::Global) return;
    if (!allocated_anywhere_) return;
    bool found = false;
    for (const auto& level : allocated) found = found || level.count(a.tv) > 0;
    check(found, a.tv->name() + " is accessed outside the scope of its allocation");
  }

  void visit(const kir::Scope& scope, std::vector<std::set<const TensorView*>>& allocated,
             bool predicated) {
    allocated.emplace_back();
    for (const kir::StmtPtr& stmt : scope) {
      switch (stmt->kind()) {
        case kir::StmtKind::ForLoop: {
          const auto& loop = *stmt->as<kir::ForLoop>();
          const bool named = loop.index.kind() == kir::ValueKind::Symbol;
          if (named) {
            // Copies of a nest (unswitch) reuse names in separate scopes; nesting must not.
            check(loop_indices_.insert(loop.index.key()).second,
                  "loop index " + loop.index.toString() + " is used by two nested loops");
          }
          visit(loop.body, allocated, predicated);
          if (named) loop_indices_.erase(loop.index.key());
          break;
        }
        case kir::StmtKind::IfThenElse: {
          const auto& branch = *stmt->as<kir::IfThenElse>();
          visit(branch.then_body, allocated, true);
          visit(branch.else_body, allocated, true);
          break;
        }
        case kir::StmtKind::Allocate:
          allocated_anywhere_ = true;
          allocated.back().insert(stmt->as<kir::Allocate>()->tv);
          break;
        case kir::StmtKind::TensorOp: {
          const auto& op = *stmt->as<kir::TensorOp>();
          access(op.output, allocated);
          for (const kir::Operand& o : op.inputs) access(o.access, allocated);
          break;
        }
        case kir::StmtKind::InitOp:
          access(stmt->as<kir::InitOp>()->output, allocated);
          break;
        case kir::StmtKind::ReductionOp: {
          const auto& op = *stmt->as<kir::ReductionOp>();
          for (const kir::TensorAccess& a : op.outputs) access(a, allocated);
          if (!op.finish) access(op.input.access, allocated);
          if (op.block.any() || op.grid.any()) {
            check(!predicated, op.outputs[0].tv->name() +
                                   "'s block or grid reduction is inside a branch: every "
                                   "thread must reach it");
          }
          break;
        }
        case kir::StmtKind::VectorCopy: {
          const auto& copy = *stmt->as<kir::VectorCopy>();
          access(copy.dst, allocated);
          access(copy.src, allocated);
          break;
        }
        case kir::StmtKind::Sync:
          check(!predicated, "__syncthreads() is inside a branch: every thread must reach it");
          break;
        case kir::StmtKind::Comment:
          break;
      }
    }
    allocated.pop_back();
  }

  const LowerContext& ctx_;
  std::string_view after_;
  bool indexed_;
  bool allocated_anywhere_ = false;
  std::set<std::string> loop_indices_;
};

}  // namespace

void verifyKernel(const kir::Kernel& kernel, const LowerContext& ctx, std::string_view after,
                  bool indexed) {
  Verifier(ctx, after, indexed).run(kernel.body);
}

}  // namespace braze::lower
