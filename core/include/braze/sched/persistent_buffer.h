#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze {

/// A tensor whose values along reduced dims must be kept until a reduction finishes, because
/// something computed from the reduction's result reads them again:
///
///   T1 = max(T0, 1);  T3 = T0 - broadcast(T1)        T0 is persistent along dim 1
///   T4 = exp(T3);  T5 = sum(T4, 1);  T6 = T4 / broadcast(T5)   T4 is persistent along dim 1
///
/// A scheduler keeps such a tensor in registers or shared memory for a whole row (a
/// "persistent" kernel) or splits the fusion.
struct PersistentBuffer {
  TensorView* tv;
  /// The (first) reduction the values must outlive.
  TensorView* reduction;
  /// The logical dims of `tv` that the reduction reduces: the buffer holds their extents'
  /// product of elements per iteration of the other dims.
  std::vector<IterDomain*> dims;
  /// The uses of `tv` that read it again after the reduction: each is, or leads to, something
  /// that also needs the reduction's result (the uses that feed the reduction are not listed).
  std::vector<Expr*> rereads;
};

/// The persistent buffers of `fusion`, each tensor once, in creation order.
std::vector<PersistentBuffer> persistentBuffers(const Fusion& fusion);

/// Bytes all persistent buffers hold for one position of their non-reduced dims: the sum over
/// buffers of the product of their persistent dims' extents times the element size. `extents`
/// must be able to evaluate those extents (bind the fusion's input sizes first); nullopt when
/// it cannot.
std::optional<int64_t> persistentBufferBytes(const Fusion& fusion, ExpressionEvaluator& extents);

}  // namespace braze
