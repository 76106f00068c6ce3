#pragma once

// Index arithmetic of one statement: from the indices of the loop nest it sits in to the
// logical indices of every tensor it touches, to storage offsets and bounds predicates.
//
// Each nest position seeds the exact group of its loop IterDomain with its index. Indices
// then flow backward through splits (in = outer * f + inner) and merges (outer = out / e,
// inner = out % e) of every tensor of the kernel, so a producer inlined into its consumer
// finds its logical indices through the consumer's transforms. Producers stored in registers
// or shared memory walk forward again from their logical indices to the loop axes their
// allocation is made of (usually found directly: replayed axes are exactly mapped).

#include <map>
#include <optional>
#include <vector>

#include "lower/lower_context.h"

namespace braze::lower {

class IndexMap {
 public:
  IndexMap(const LowerContext& ctx, const std::vector<kir::NestPosition>& nest);

  std::optional<kir::Value> find(const IterDomain* id) const;

  /// Indices of every logical dim of `out` (reductions included); a Broadcast dim not
  /// iterated here has index 0.
  std::vector<kir::Value> outputLogical(const TensorView* out) const;

  /// Logical indices of input `input` of `expr` (its user-visible dims), found from the
  /// output's, and the condition under which the input is read at all (pad, cat; undefined
  /// when always).
  struct ProducerIndex {
    std::vector<kir::Value> logical;
    kir::Value guard;
  };
  ProducerIndex producerLogical(const Expr& expr, size_t input) const;

  /// Offset of the element at user-visible logical indices `logical` in `tv`'s storage.
  kir::Value offsetOf(const TensorView* tv, const std::vector<kir::Value>& logical) const;

  /// Offset of `out`'s element written here.
  kir::Value outputOffset(const TensorView* out) const;

  /// The bounds this statement's iteration point must satisfy for `out`: at the outermost
  /// split input of every non-divisible split chain, and for every thread or block index
  /// whose launch size may exceed its loop's extent. Split into conditions over iteration
  /// dims and over reduction dims.
  struct Bounds {
    std::vector<kir::Value> iteration;
    std::vector<kir::Value> reduction;
  };
  Bounds bounds(const TensorView* out) const;

  /// Text of `tv`'s storage base as codegen prints it: "T0.data" for global tensors, "T3"
  /// for local and shared ones.
  static std::string storageText(const LowerContext& ctx, const TensorView* tv);

 private:
  std::vector<kir::Value> indicesOf(const TensorView* out,
                                    const std::vector<IterDomain*>& domain) const;
  void propagateBackward(std::map<int64_t, kir::Value>& known) const;
  void propagateForward(std::map<int64_t, kir::Value>& known, const TensorView* tv) const;
  kir::Value normalizedPosition(const kir::Value& position, const IterDomain* dim) const;

  const LowerContext& ctx_;
  const std::vector<kir::NestPosition>& nest_;
  std::map<int64_t, kir::Value> known_;
};

/// True when a Split provably leaves no remainder (constant extent divisible by the factor).
bool isDivisibleSplit(const Expr& split);

}  // namespace braze::lower
