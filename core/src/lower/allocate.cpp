// allocate: storage for every Local (register) and Shared intermediate. A tensor inlined at
// position k lives just inside the innermost loop among its first k axes, so it is recomputed
// and overwritten each iteration of that loop and no larger than the axes after k:
//
//   for i2 in 0..T0.size[0]:       T1 inlined at 1, T1's axis 1 has extent 4
//     float T1[4];
//     for i3 in 0..4: T1[i3] = ...
//
// Shared tensors are declared once at the top of the kernel: static arrays while every size is
// a constant and all of them, with the block reductions' scratch, fit the 48 KiB a kernel may
// declare statically; otherwise all of them live in dynamic shared memory, each at a 16-byte
// aligned offset, the reductions' scratch after them, and the launch sizes it:
//
//   extern __shared__ __align__(16) char braze_dynamic_smem[];
//   __nv_bfloat16* T5 = reinterpret_cast<__nv_bfloat16*>(braze_dynamic_smem + 0);
//   char* braze_smem = braze_dynamic_smem + ((ceilDiv(blockDim.x * 16, 8) * 8) ...);
//
// Global intermediates are kernel parameters the executor allocates (see
// LowerContext::parameters).

#include <algorithm>
#include <map>

#include "braze/ops/elementwise.h"
#include "lower/passes.h"

namespace braze::lower {

namespace {

using LoopChain = std::vector<kir::ForLoop*>;

std::vector<const TensorView*> outputsOf(const kir::Stmt& stmt) {
  std::vector<const TensorView*> out;
  if (const auto* op = stmt.dynCast<kir::TensorOp>()) out.push_back(op->output.tv);
  if (const auto* op = stmt.dynCast<kir::InitOp>()) out.push_back(op->output.tv);
  if (const auto* op = stmt.dynCast<kir::ReductionOp>()) {
    for (const kir::TensorAccess& a : op->outputs) out.push_back(a.tv);
  }
  return out;
}

std::vector<const TensorView*> inputsOf(const kir::Stmt& stmt) {
  std::vector<const TensorView*> in;
  if (const auto* op = stmt.dynCast<kir::TensorOp>()) {
    for (const kir::Operand& operand : op->inputs) {
      if (operand.kind == kir::Operand::Kind::Tensor) in.push_back(operand.access.tv);
    }
  }
  if (const auto* op = stmt.dynCast<kir::ReductionOp>()) in.push_back(op->input.access.tv);
  return in;
}

void walk(kir::Scope& scope, LoopChain& chain,
          const std::function<void(kir::Stmt&, const LoopChain&)>& visit) {
  for (kir::StmtPtr& stmt : scope) {
    visit(*stmt, chain);
    if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
      chain.push_back(loop);
      walk(loop->body, chain, visit);
      chain.pop_back();
    } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
      walk(branch->then_body, chain, visit);
      walk(branch->else_body, chain, visit);
    }
  }
}

// What a kernel may declare as static shared memory.
constexpr int64_t kStaticSharedLimitBytes = 48 * 1024;
constexpr int64_t kSharedAlignmentBytes = 16;

int64_t roundUp(int64_t bytes) {
  return (bytes + kSharedAlignmentBytes - 1) / kSharedAlignmentBytes * kSharedAlignmentBytes;
}

// Bytes of static shared memory the block reductions' scratch takes: the per-thread bytes
// times a constant block; 0 when the block is known only at launch (the scratch is then
// dynamic anyway).
int64_t staticReductionBytes(const kir::Kernel& kernel) {
  return kir::constantBlockThreads(kernel).value_or(0) * kernel.reduction_smem_bytes_per_thread;
}

// Places the shared tensors in dynamic shared memory when one has a size known only at launch
// or, all static, they would not fit the static limit.
void placeSharedTensors(kir::Kernel& kernel, const std::vector<kir::Allocate*>& shared,
                        const LowerContext& ctx) {
  bool dynamic = false;
  int64_t static_bytes = staticReductionBytes(kernel);
  for (const kir::Allocate* alloc : shared) {
    const std::optional<int64_t> size = alloc->size.constantValue();
    if (!size) {
      dynamic = true;
      break;
    }
    static_bytes += roundUp(*size * sizeInBytes(alloc->dtype));
  }
  if (!dynamic && static_bytes <= kStaticSharedLimitBytes) return;
  Fusion& fusion = ctx.mutableFusion();
  Val* offset = fusion.constantIndex(0);
  for (kir::Allocate* alloc : shared) {
    alloc->dynamic_offset = ctx.scalarValue(offset);
    const Val* elements = ctx.layoutOf(alloc->tv).size_at_launch;
    Val* bytes = mul(Operand(const_cast<Val*>(elements)), sizeInBytes(alloc->dtype));
    Val* aligned =
        mul(Operand(ceil_div(Operand(bytes), kSharedAlignmentBytes)), kSharedAlignmentBytes);
    offset = add(Operand(offset), Operand(aligned));
  }
  kernel.dynamic_shared_tensor_bytes = offset;
  kernel.dynamic_shared_tensor_bytes_in_kernel = ctx.scalarValue(offset);
}

}  // namespace

kir::Kernel allocate(kir::Kernel kernel, const LowerContext& ctx) {
  std::vector<const TensorView*> order;
  std::map<const TensorView*, kir::Scope*> scope_of;
  LoopChain chain;
  walk(kernel.body, chain, [&](kir::Stmt& stmt, const LoopChain& loops) {
    for (const TensorView* tv : outputsOf(stmt)) {
      if (ctx.memoryOf(tv) == MemoryType::Global || scope_of.count(tv)) continue;
      kir::Scope* scope = &kernel.body;
      if (ctx.memoryOf(tv) == MemoryType::Local) {
        std::vector<int64_t> groups;
        for (int64_t j = 0; j < ctx.graph().inlinePositionOf(tv); ++j)
          groups.push_back(ctx.graph().loopGroup(tv->loopAxis(j)));
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
          const int64_t group = ctx.graph().loopGroup((*it)->id);
          if (std::find(groups.begin(), groups.end(), group) != groups.end()) {
            scope = &(*it)->body;
            break;
          }
        }
      }
      scope_of.emplace(tv, scope);
      order.push_back(tv);
    }
  });

  // Registers must be read inside the loop they are allocated in.
  walk(kernel.body, chain,
       [&](kir::Stmt& stmt, const LoopChain& loops) {
         for (const TensorView* tv : inputsOf(stmt)) {
           if (ctx.memoryOf(tv) != MemoryType::Local) continue;
           auto it = scope_of.find(tv);
           if (it == scope_of.end() || it->second == &kernel.body) continue;
           const bool inside = std::any_of(loops.begin(), loops.end(), [&](kir::ForLoop* loop) {
             return &loop->body == it->second;
           });
           BRAZE_USER_CHECK(inside)
               << "lowering: " << tv->name()
               << " is kept in registers inside the loops it is inlined "
               << "into (position " << ctx.graph().inlinePositionOf(tv)
               << "), but one of its readers runs "
               << "outside those loops; inline the reader into the same loops or lower the inline "
                  "position of "
               << tv->name();
         }
       });

  std::map<kir::Scope*, std::vector<kir::StmtPtr>> inserts;
  std::vector<kir::Allocate*> shared;
  for (const TensorView* tv : order) {
    const AllocationLayout& layout = ctx.layoutOf(tv);
    auto alloc = std::make_unique<kir::Allocate>();
    alloc->tv = tv;
    alloc->memory = ctx.memoryOf(tv);
    alloc->dtype = tv->dtype();
    alloc->size = layout.size;
    if (alloc->memory == MemoryType::Shared) shared.push_back(alloc.get());
    inserts[scope_of[tv]].push_back(std::move(alloc));
  }
  placeSharedTensors(kernel, shared, ctx);
  for (auto& [scope, allocs] : inserts) {
    scope->insert(scope->begin(), std::make_move_iterator(allocs.begin()),
                  std::make_move_iterator(allocs.end()));
  }
  return kernel;
}

}  // namespace braze::lower
