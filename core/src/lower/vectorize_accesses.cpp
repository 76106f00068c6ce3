// vectorize-accesses: a Vectorize loop around a copy between global memory and registers (or
// shared memory) becomes one vector access of the whole loop:
//
//   for i5 in 0..4 (vectorize): if (p(i5)) T3[i5] = T0.data[b + i5]
//     ->  if (p(3)) vectorCopy<4>(&T3[0], &T0.data[b])
//
// The lanes must be consecutive elements on both sides and the first lane aligned to the
// vector's size. What cannot be proven here becomes a launch check (a size divisible by the
// width) or an alignment requirement on a parameter (its data pointer, and strides known only
// at run time). The predicate is taken at the last lane: when the vectorized extent is a
// multiple of the width, which the launch checks, every lane is in bounds exactly when the
// last one is.
//
// Vectorize loops around other statements (math on registers) stay unrolled loops.

#include <numeric>
#include <optional>

#include "braze/ops/elementwise.h"
#include "lower/index_compute.h"
#include "lower/passes.h"

namespace braze::lower {

namespace {

class Vectorizer {
 public:
  Vectorizer(const LowerContext& ctx, kir::Kernel& kernel) : ctx_(ctx), kernel_(kernel) {}

  void run(kir::Scope& scope) {
    for (kir::StmtPtr& stmt : scope) {
      if (auto* loop = stmt->dynCast<kir::ForLoop>()) {
        if (loop->parallel_type == ParallelType::Vectorize) {
          if (kir::StmtPtr replaced = tryVectorize(*loop)) {
            stmt = std::move(replaced);
            continue;
          }
        }
        run(loop->body);
      } else if (auto* branch = stmt->dynCast<kir::IfThenElse>()) {
        run(branch->then_body);
        run(branch->else_body);
      }
    }
  }

 private:
  std::string axisLabel(const kir::ForLoop& loop) const {
    const TensorView* owner = ctx_.graph().ownerOf(loop.id);
    return (owner != nullptr ? owner->name() + " " : std::string()) + loop.id->name();
  }

  kir::StmtPtr tryVectorize(kir::ForLoop& loop) {
    if (loop.body.size() != 1) return nullptr;
    kir::Value predicate;
    kir::Stmt* inner = loop.body[0].get();
    if (auto* branch = inner->dynCast<kir::IfThenElse>()) {
      if (branch->then_body.size() != 1 || !branch->else_body.empty()) return nullptr;
      predicate = branch->predicate;
      inner = branch->then_body[0].get();
    }
    auto* op = inner->dynCast<kir::TensorOp>();
    if (op == nullptr || op->expr->op() != OpKind::Set) return nullptr;
    const kir::TensorAccess& src = op->inputs[0].access;
    const kir::TensorAccess& dst = op->output;
    const bool src_global = ctx_.memoryOf(src.tv) == MemoryType::Global;
    const bool dst_global = ctx_.memoryOf(dst.tv) == MemoryType::Global;
    if (src_global == dst_global) return nullptr;

    const auto width = loop.extent.constantValue();
    BRAZE_USER_CHECK(width.has_value())
        << "lowering: vectorized axis " << axisLabel(loop) << " has the symbolic extent "
        << loop.extent.toString() << "; a vector width must be a constant";
    const int64_t bytes = *width * sizeInBytes(dst.tv->dtype());
    BRAZE_USER_CHECK(bytes <= 16 && (bytes & (bytes - 1)) == 0)
        << "lowering: vectorizing " << axisLabel(loop) << " by " << *width << " " << dst.tv->dtype()
        << " elements is a " << bytes << "-byte access; vector accesses are 2, 4, 8 or 16 bytes";

    const std::map<std::string, kir::Value> first{{loop.index.key(), kir::constant(0)}};
    const kir::Value src_base = kir::substitute(src.offset, first);
    const kir::Value dst_base = kir::substitute(dst.offset, first);
    for (const auto* side : {&src, &dst}) {
      const kir::Value base = side == &src ? src_base : dst_base;
      BRAZE_USER_CHECK(side->offset == base + loop.index)
          << "lowering: vectorized axis " << axisLabel(loop) << " does not walk consecutive "
          << "elements of " << side->tv->name() << " (lane i is at " << side->offset.toString()
          << "); only the innermost contiguous dim can be vectorized";
      requireAligned(base, *width, *side, loop);
    }

    if (src_global) requireDivisible(loop, *width);
    if (dst_global) requireDivisible(loop, *width);
    auto copy = std::make_unique<kir::VectorCopy>();
    copy->dst = {dst.tv, dst_base};
    copy->src = {src.tv, src_base};
    copy->width = *width;
    copy->expr = op->expr;
    copy->read_only = src_global && ctx_.fusion().readOnlyLoads(src.tv);
    if (!predicate.defined()) return copy;
    const std::map<std::string, kir::Value> last{{loop.index.key(), kir::constant(*width - 1)}};
    auto branch = std::make_unique<kir::IfThenElse>();
    branch->predicate = kir::substitute(predicate, last);
    branch->predicate_kind = kir::PredicateKind::Bounds;
    branch->then_body.push_back(std::move(copy));
    return branch;
  }

  // Every term of the first lane's offset must be a multiple of the width: by its coefficient,
  // by a size checked at launch, or by a run-time stride the executor checks.
  void requireAligned(const kir::Value& base, int64_t width, const kir::TensorAccess& access,
                      const kir::ForLoop& loop) {
    const bool global = ctx_.memoryOf(access.tv) == MemoryType::Global;
    int64_t constant = 0;
    const std::vector<kir::PolynomialTerm> terms = kir::termsOf(base, &constant);
    BRAZE_USER_CHECK(constant % width == 0)
        << "lowering: vectorized access of " << access.tv->name() << " along " << axisLabel(loop)
        << " starts at an offset that is not a multiple of " << width;
    int64_t parameter = global ? ctx_.parameterOf(access.tv) : -1;
    std::vector<int64_t> stride_dims;
    for (const kir::PolynomialTerm& term : terms) {
      if (term.coefficient % width == 0) continue;
      const int64_t needed = width / std::gcd(std::abs(term.coefficient), width);
      bool resolved = false;
      // The extent the vector is split from must divide anyway (requireDivisible): a term it
      // is a factor of needs no other size to be a multiple of the width. In
      // i1 * s1 * s2 + i2 * 4 (a row of s2 split by 4), s1 is free. Indexing spells one extent
      // per exact group, possibly another tensor's size than the split's own (T0.size[3] for
      // T2's row): compare the spellings.
      const std::optional<kir::Value> split_extent = vectorSplitExtent(loop);
      for (const kir::Value& factor : term.factors) {
        if (factor.kind() != kir::ValueKind::Symbol) continue;
        const kir::SymbolInfo& info = factor.node().symbol;
        if (info.role == kir::SymbolRole::Extent && info.fusion_val != nullptr &&
            split_extent.has_value() && factor == *split_extent) {
          addDivisibilityCheck(
              info.fusion_val, needed,
              "a size used to index " + access.tv->name() + " vectorized along " + axisLabel(loop));
          resolved = true;
          break;
        }
      }
      for (const kir::Value& factor : term.factors) {
        if (resolved) break;
        if (factor.kind() != kir::ValueKind::Symbol) continue;
        const kir::SymbolInfo& info = factor.node().symbol;
        if (info.role == kir::SymbolRole::Extent && info.fusion_val != nullptr) {
          addDivisibilityCheck(
              info.fusion_val, needed,
              "a size used to index " + access.tv->name() + " vectorized along " + axisLabel(loop));
          resolved = true;
          break;
        }
        if (info.role == kir::SymbolRole::Stride && global) {
          stride_dims.push_back(info.dim);
          resolved = true;
          break;
        }
      }
      BRAZE_USER_CHECK(resolved)
          << "lowering: vectorized access of " << access.tv->name() << " along " << axisLabel(loop)
          << " is not aligned to " << width << " elements (first lane at " << base.toString()
          << "); the vectorized axis must be the inner part of a split by the "
          << "width";
    }
    if (global) {
      for (auto& a : kernel_.alignments) {
        if (a.parameter == static_cast<size_t>(parameter)) {
          a.bytes = std::max(a.bytes, width * sizeInBytes(access.tv->dtype()));
          a.stride_dims.insert(a.stride_dims.end(), stride_dims.begin(), stride_dims.end());
          return;
        }
      }
      kernel_.alignments.push_back(
          {static_cast<size_t>(parameter), width * sizeInBytes(access.tv->dtype()), stride_dims});
    }
  }

  // The extent of the dim the vector axis is split from, as indexing spells it, or nullopt.
  std::optional<kir::Value> vectorSplitExtent(const kir::ForLoop& loop) const {
    const Expr* split = loop.id->definition();
    if (split == nullptr || split->op() != OpKind::Split) return std::nullopt;
    return ctx_.extentOf(split->input(0)->as<IterDomain>());
  }

  // Lanes are all in bounds or all out only if the split that made the vector axis divides.
  void requireDivisible(const kir::ForLoop& loop, int64_t width) {
    const Expr* split = loop.id->definition();
    if (split == nullptr || split->op() != OpKind::Split) return;
    if (isDivisibleSplit(*split)) return;
    addDivisibilityCheck(split->input(0)->as<IterDomain>()->logicalExtent(), width,
                         "the extent vectorized along " + axisLabel(loop));
  }

  void addDivisibilityCheck(const Val* size, int64_t divisor, const std::string& what) {
    if (const auto* s = size->dynCast<Scalar>()) {
      if (auto c = s->constantInt()) {
        BRAZE_USER_CHECK(*c % divisor == 0)
            << "lowering: " << what << " is " << *c << ", not a multiple of " << divisor;
        return;
      }
    }
    for (const auto& [check, message] : kernel_.launch_checks) {
      const Expr* def = check->definition();
      if (def != nullptr && def->op() == OpKind::Eq) {
        const Expr* rem = def->input(0)->definition();
        if (rem != nullptr && rem->input(0) == size &&
            rem->input(1)->as<Scalar>()->isConstantEqualTo(divisor))
          return;
      }
    }
    Val* remainder = fmod(Operand(const_cast<Val*>(size)), divisor);
    Val* check = eq(Operand(remainder), int64_t{0});
    kernel_.launch_checks.emplace_back(
        check, what + " (" + size->name() + ") must be a multiple of " + std::to_string(divisor) +
                   " for vectorized accesses; use a kernel without vectorization for these sizes");
  }

  const LowerContext& ctx_;
  kir::Kernel& kernel_;
};

}  // namespace

kir::Kernel vectorizeAccesses(kir::Kernel kernel, const LowerContext& ctx) {
  Vectorizer(ctx, kernel).run(kernel.body);
  return kernel;
}

}  // namespace braze::lower
