// record-launch-checks: what the kernel assumes of its arguments that only the launch can
// check. With the 32-bit index type, every tensor the kernel touches must have fewer than
// 2^31 elements (an executor whose inputs fail the check lowers again with int64 indices).
// Checks of vectorized accesses are recorded by vectorize-accesses.

#include "braze/ops/elementwise.h"
#include "lower/passes.h"

namespace braze::lower {

kir::Kernel recordLaunchChecks(kir::Kernel kernel, const LowerContext& ctx) {
  if (ctx.indexType() != DataType::Int32) return kernel;
  constexpr int64_t kLimit = 2147483647;
  for (const kir::Parameter& p : ctx.parameters()) {
    const auto* tv = p.val->dynCast<TensorView>();
    if (tv == nullptr) continue;
    Val* numel = ctx.mutableFusion().constantIndex(1);
    bool symbolic = false;
    int64_t constant = 1;
    for (const IterDomain* id : tv->logicalNoReductions()) {
      Scalar* extent =
          p.kind == kir::Parameter::Kind::InputTensor ? id->extent() : id->logicalExtent();
      if (auto c = extent->constantInt()) {
        constant = constant > kLimit ? constant : constant * *c;
      } else {
        symbolic = true;
      }
      numel = mul(Operand(numel), Operand(extent));
    }
    if (!symbolic) {
      BRAZE_USER_CHECK(constant <= kLimit)
          << "lowering: " << tv->name() << " has " << constant
          << " elements, too many for 32-bit indexing; lower with index_type = int64";
      continue;
    }
    kernel.launch_checks.emplace_back(
        le(Operand(numel), kLimit),
        tv->name() +
            " must have fewer than 2^31 elements (and its largest element offset must "
            "fit in 32 bits) for this kernel's 32-bit indexing; lower with int64 indices");
  }
  return kernel;
}

}  // namespace braze::lower
