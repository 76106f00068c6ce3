// full, zeros, ones, iota and arange: tensors made from scalars alone. Their extents are
// constants or scalars of the fusion; arange's length is computed here, folded when its
// arguments are constants:
//
//   arange(f, 2, s0, 3), s0: index
//                         s1 = sub(s0, 2); s2 = ceil_div(s1, 3); s3 = maximum(s2, 0)
//                         T0: int64[i0{s3}] = iota(2, 3)

#include <cmath>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

// A size argument as an Index scalar; negative constants are refused.
Scalar* sizeArgument(Fusion& fusion, const Operand& size, std::string_view op,
                     const std::string& argument) {
  Scalar* scalar = ops_detail::indexScalar(fusion, size, op, argument);
  const std::optional<int64_t> value = scalar->constantInt();
  BRAZE_USER_CHECK(!value || *value >= 0)
      << op << ": " << argument << " is " << *value << "; sizes must be non-negative";
  return scalar;
}

void checkNumeric(std::string_view op, DataType dtype) {
  BRAZE_USER_CHECK(!isBoolean(dtype))
      << op << ": dtype bool has no arithmetic sequence; use an integer or floating dtype";
}

// The Operand's dtype, for constants their natural one (int64, float64, bool).
DataType dtypeOf(const Operand& operand) {
  return operand.isVal() ? operand.val()->dtype() : naturalDataType(operand.constant());
}

std::optional<ScalarValue> constantOf(const Operand& operand) {
  if (!operand.isVal()) return operand.constant();
  if (const auto* scalar = operand.val()->dynCast<Scalar>()) return scalar->value();
  return std::nullopt;
}

// ceil((end - start) / step) when start, end and step are constants; nullopt otherwise.
std::optional<int64_t> constantLength(const Operand& start, const Operand& end, const Operand& step,
                                      bool floating) {
  const std::optional<ScalarValue> a = constantOf(start);
  const std::optional<ScalarValue> b = constantOf(end);
  const std::optional<ScalarValue> s = constantOf(step);
  if (!a || !b || !s) return std::nullopt;
  if (floating) {
    const double length = std::ceil((toDouble(*b) - toDouble(*a)) / toDouble(*s));
    return std::max<int64_t>(toInt64(length), 0);
  }
  const int64_t diff = toInt64(*b) - toInt64(*a);
  const int64_t by = toInt64(*s);
  // Exact integer ceil division for either sign of the step.
  const int64_t length = diff / by + ((diff % by != 0 && (diff < 0) == (by < 0)) ? 1 : 0);
  return std::max<int64_t>(length, 0);
}

// The length as a scalar expression when some argument is symbolic. With a constant step of an
// integer sequence it is an exact ceil_div in the Index dtype; otherwise the ceil of the true
// quotient in float64 (exact for integers up to 2^53). An inconsistent sign gives an empty
// tensor instead of PyTorch's error, which needs the values.
Scalar* symbolicLength(Fusion& fusion, Scalar* start, Scalar* end, Scalar* step, bool exact) {
  Val* length = nullptr;
  if (exact) {
    const int64_t by = *step->constantInt();
    length = by > 0 ? ceil_div(sub(end, start), step)
                    : ceil_div(sub(start, end), fusion.constantIndex(-by));
  } else {
    length = cast(ceil(truediv(sub(end, start), step)), DataType::Index);
  }
  return ops_detail::maxExtents(length->as<Scalar>(), fusion.constantIndex(0));
}

}  // namespace

TensorView* full(Fusion& fusion, const std::vector<Operand>& shape, Operand value, DataType dtype) {
  std::vector<IterDomain*> domain;
  for (size_t i = 0; i < shape.size(); ++i) {
    Scalar* size = sizeArgument(fusion, shape[i], "full", "shape[" + std::to_string(i) + "]");
    domain.push_back(ops_detail::iterDomainOfExtent(fusion, size));
  }
  Scalar* fill = ops_detail::scalarOfType(fusion, value, dtype, "full", "value");
  auto* y = fusion.create<TensorView>(dtype, std::move(domain));
  fusion.create<Expr>(OpKind::Full, std::vector<Val*>{fill}, std::vector<Val*>{y});
  return y;
}

TensorView* zeros(Fusion& fusion, const std::vector<Operand>& shape, DataType dtype) {
  return full(fusion, shape, int64_t{0}, dtype);
}

TensorView* ones(Fusion& fusion, const std::vector<Operand>& shape, DataType dtype) {
  return full(fusion, shape, int64_t{1}, dtype);
}

TensorView* iota(Fusion& fusion, Operand length, Operand start, Operand step, DataType dtype) {
  checkNumeric("iota", dtype);
  Scalar* size = sizeArgument(fusion, length, "iota", "length");
  Scalar* first = ops_detail::scalarOfType(fusion, start, dtype, "iota", "start");
  Scalar* by = ops_detail::scalarOfType(fusion, step, dtype, "iota", "step");
  auto* y = fusion.create<TensorView>(
      dtype, std::vector<IterDomain*>{ops_detail::iterDomainOfExtent(fusion, size)});
  fusion.create<Expr>(OpKind::Iota, std::vector<Val*>{first, by}, std::vector<Val*>{y});
  return y;
}

TensorView* arange(Fusion& fusion, Operand start, Operand end, Operand step, DataType dtype) {
  checkNumeric("arange", dtype);
  for (const Operand* argument : {&start, &end, &step}) {
    BRAZE_USER_CHECK(!argument->isTensor())
        << "arange: start, end and step must be scalars, got tensor " << argument->val()->name();
    BRAZE_USER_CHECK(!isBoolean(dtypeOf(*argument)))
        << "arange: start, end and step must be numbers, got a bool";
  }
  const bool floating = isFloatingPoint(dtypeOf(start)) || isFloatingPoint(dtypeOf(end)) ||
                        isFloatingPoint(dtypeOf(step));
  BRAZE_USER_CHECK(!floating || isFloatingPoint(dtype))
      << "arange: start, end or step is floating but dtype is " << dtype
      << "; pass a floating dtype (for example float32) or integer arguments";
  if (const std::optional<ScalarValue> by = constantOf(step)) {
    BRAZE_USER_CHECK(toDouble(*by) != 0.0) << "arange: step must be nonzero";
  }
  const std::optional<ScalarValue> a = constantOf(start);
  const std::optional<ScalarValue> b = constantOf(end);
  const std::optional<ScalarValue> s = constantOf(step);
  if (a && b && s) {
    const double direction = (toDouble(*b) - toDouble(*a)) * toDouble(*s);
    BRAZE_USER_CHECK(direction >= 0)
        << "arange: start " << toString(*a) << ", end " << toString(*b) << " and step "
        << toString(*s) << " are inconsistent: the step moves away from the end";
  }
  Scalar* length = nullptr;
  if (std::optional<int64_t> n = constantLength(start, end, step, floating)) {
    length = fusion.constantIndex(*n);
  } else {
    const bool exact = !floating && s.has_value();
    const DataType compute = exact ? DataType::Index : DataType::Float64;
    auto operand = [&](const Operand& value, std::string_view name) {
      return ops_detail::scalarOfType(fusion, value, compute, "arange", name);
    };
    length = symbolicLength(fusion, operand(start, "start"), operand(end, "end"),
                            operand(step, "step"), exact);
  }
  return iota(fusion, length, start, step, dtype);
}

}  // namespace braze
