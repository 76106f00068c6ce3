#pragma once

#include "braze/eval/strided_layout.h"

// The reference evaluator's internal representation of a tensor value, and the context every
// op family's evaluation function receives. Internal to core/src/eval.
//
// Values are held in the category of their dtype (bool, int64, double), so the evaluator
// computes in float64 / int64 / bool whatever the storage dtype is. An EvalTensor is a strided
// view of shared storage: broadcast, expand, permute, slice and select create views without
// copying, and every loop reads through strides.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/eval/host_tensor.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze::eval_detail {

/// The category a value is held in; matches ScalarValue's alternatives.
enum class Held : uint8_t { Bool, Int, Float };

Held heldOf(DataType dtype);

template <Held H>
struct HeldTraits;
template <>
struct HeldTraits<Held::Bool> {
  using Type = bool;
};
template <>
struct HeldTraits<Held::Int> {
  using Type = int64_t;
};
template <>
struct HeldTraits<Held::Float> {
  using Type = double;
};
template <Held H>
using HeldType = typename HeldTraits<H>::Type;

/// Calls f(HeldTag<H>{}) for the runtime category `held`, so that one generic lambda gets a
/// typed loop per category: `visitHeld(h, [&](auto tag) { using T = typename
/// decltype(tag)::Type; ... })`.
template <Held H>
struct HeldTag {
  static constexpr Held kHeld = H;
  using Type = HeldType<H>;
};
template <typename F>
decltype(auto) visitHeld(Held held, F&& f) {
  switch (held) {
    case Held::Bool:
      return f(HeldTag<Held::Bool>{});
    case Held::Int:
      return f(HeldTag<Held::Int>{});
    case Held::Float:
      break;
  }
  return f(HeldTag<Held::Float>{});
}

/// Converts between held categories as castScalar does: float to int truncates toward zero
/// (nan gives 0, out-of-range saturates), anything to bool is `!= 0`.
template <typename To, typename From>
To convertHeld(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != 0;
  } else if constexpr (std::is_same_v<To, int64_t> && std::is_same_v<From, double>) {
    return toInt64(ScalarValue(value));
  } else {
    return static_cast<To>(value);
  }
}

/// A strided view (sizes, strides and offset in elements) of held values.
struct EvalTensor {
  Held held = Held::Float;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::shared_ptr<void> storage;

  /// A new contiguous tensor; contents uninitialized.
  static EvalTensor allocate(Held held, std::vector<int64_t> sizes);
  /// A 0-d tensor holding `value` in `held`'s category.
  static EvalTensor ofScalar(Held held, const ScalarValue& value);
  /// A new contiguous tensor of `sizes` with every element `value`.
  static EvalTensor filled(Held held, std::vector<int64_t> sizes, const ScalarValue& value);

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;

  template <typename T>
  T* data() const {
    return static_cast<T*>(storage.get());
  }

  /// The element at a storage offset, as a ScalarValue (slow path and error messages).
  ScalarValue load(int64_t element_offset) const;
};

/// Copies `source` into the view `destination` (same sizes), converting between categories.
void copyInto(const EvalTensor& source, const EvalTensor& destination);
/// A contiguous copy in category `held`.
EvalTensor materialize(const EvalTensor& source, Held held);
/// `tensor` itself when it already holds `held`, else a converted copy.
EvalTensor convertedTo(const EvalTensor& tensor, Held held);

/// Imports a host tensor (any dtype, any strides). Dims of stride 0 stay stride 0, so an
/// expanded input is not materialized.
EvalTensor importHostTensor(const HostTensor& tensor);
/// A new dense host tensor of `dtype` laid out in `allocation_order` (empty: row-major),
/// rounding floats to its precision.
HostTensor exportHostTensor(const EvalTensor& tensor, DataType dtype,
                            const std::vector<int64_t>& allocation_order = {});

using ::braze::formatSizes;
/// How evaluation errors name a tensor: "T3", or "T0 (input 0)" for a fusion input.
std::string tensorLabel(const TensorView& tv);
/// How evaluation errors name an op: "T2 = add(T0, T1)".
std::string exprLabel(const Expr& expr);

/// What an op family's evaluation function gets: the values computed so far and the scalar
/// evaluator bound to the fusion's arguments.
class EvalContext {
 public:
  EvalContext(const Fusion& fusion, ExpressionEvaluator& scalars);

  /// The value of a TensorView already evaluated.
  const EvalTensor& tensor(const Val* val) const;
  void setTensor(const Val* val, EvalTensor value);
  void releaseTensor(const Val* val);

  /// The value of a scalar Val (constant, bound, or computed from those).
  ScalarValue scalar(const Val* val, std::string_view what);
  /// The user-visible sizes of `tv` as its extents evaluate (expanded extents for expanded
  /// broadcast dims): used by ops whose output shape is defined by extents, not data.
  std::vector<int64_t> extentsOf(const TensorView& tv);

  ExpressionEvaluator& scalars() { return scalars_; }

 private:
  ExpressionEvaluator& scalars_;
  std::vector<std::unique_ptr<EvalTensor>> tensors_;  // by statement id
};

// One evaluation function per op family; each returns the Expr's outputs in order, with
// sizes equal to each output's user-visible shape.
std::vector<EvalTensor> evaluateElementwiseExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateReductionExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateWelfordExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateScanExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateShapeExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateIndexingExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateFactoryExpr(const Expr& expr, EvalContext& context);
std::vector<EvalTensor> evaluateContractionExpr(const Expr& expr, EvalContext& context);

/// Validates the arguments of a fusion run against its inputs (count, kinds, dtypes, ranks,
/// sizes, shared extents, layouts), binds scalar inputs and input extents in `scalars`, and
/// imports the input tensors into `context`. Throws before importing anything when an argument
/// is wrong.
void bindArguments(const Fusion& fusion, const std::vector<EvaluatorArgument>& arguments,
                   EvalContext& context);

}  // namespace braze::eval_detail
