// uniform and normal: counter-based random tensors (see braze/ops/random.h). Their inputs are
// the distribution's two parameters (in the compute dtype: float64 for float64 outputs, float32
// otherwise) and the Philox seed and offset (int64):
//
//   uniform(fusion, {s0, 4}, 0.0, 1.0, float32, seed=s1, offset=s2)
//     T0: float32[i0{s0}, i1{4}] = uniform(0.0f, 1.0f, s1, s2)

#include "braze/ops/random.h"

#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

// float64 draws 53 bits and computes in double; the other floating dtypes compute in float32.
DataType parameterDtype(DataType dtype) {
  return dtype == DataType::Float64 ? DataType::Float64 : DataType::Float32;
}

void checkRandomDtype(std::string_view op, DataType dtype) {
  BRAZE_USER_CHECK(isFloatingPoint(dtype))
      << op << ": dtype " << dtype
      << " is not floating; random distributions make float32, float64, float16, bfloat16 or "
         "float8 tensors (cast the result for another dtype)";
}

Scalar* distributionParameter(Fusion& fusion, const Operand& value, DataType dtype,
                              std::string_view op, std::string_view argument) {
  BRAZE_USER_CHECK(!value.isTensor())
      << op << ": " << argument << " must be a scalar, got tensor " << value.val()->name();
  BRAZE_USER_CHECK(!isBoolean(value.dtype()))
      << op << ": " << argument << " is a bool; pass a number";
  return ops_detail::scalarOfType(fusion, value, parameterDtype(dtype), op, argument);
}

// An integer scalar (int32, int64 or index Val, or an int constant) as an int64 scalar.
Scalar* rngArgument(Fusion& fusion, const Operand& value, std::string_view op,
                    std::string_view argument) {
  BRAZE_USER_CHECK(!value.isTensor())
      << op << ": " << argument << " must be an integer scalar, got tensor " << value.val()->name();
  BRAZE_USER_CHECK(isIntegral(value.dtype()))
      << op << ": " << argument << " has dtype " << value.dtype()
      << "; the Philox seed and offset are integers (int64 fusion inputs or int constants)";
  return ops_detail::scalarOfType(fusion, value, DataType::Int64, op, argument);
}

std::optional<double> constantValue(const Scalar* scalar) {
  if (!scalar->isConstant()) return std::nullopt;
  return toDouble(*scalar->value());
}

TensorView* randomTensor(Fusion& fusion, OpKind op, const std::vector<Operand>& shape,
                         Scalar* first, Scalar* second, DataType dtype,
                         const std::optional<Operand>& rng_seed,
                         const std::optional<Operand>& rng_offset) {
  const std::string_view name = toString(op);
  BRAZE_USER_CHECK(rng_seed.has_value() == rng_offset.has_value())
      << name << ": rng_seed and rng_offset must be given together (got only "
      << (rng_seed ? "rng_seed" : "rng_offset")
      << "); pass both, or neither for seed 0 and offset 0";
  Scalar* seed = rngArgument(fusion, rng_seed.value_or(int64_t{0}), name, "rng_seed");
  Scalar* offset = rngArgument(fusion, rng_offset.value_or(int64_t{0}), name, "rng_offset");
  std::vector<IterDomain*> domain;
  for (size_t i = 0; i < shape.size(); ++i) {
    Scalar* size =
        ops_detail::indexScalar(fusion, shape[i], name, "shape[" + std::to_string(i) + "]");
    const std::optional<int64_t> value = size->constantInt();
    BRAZE_USER_CHECK(!value || *value >= 0)
        << name << ": shape[" << i << "] is " << *value << "; sizes must be non-negative";
    domain.push_back(ops_detail::iterDomainOfExtent(fusion, size));
  }
  auto* y = fusion.create<TensorView>(dtype, std::move(domain));
  fusion.create<Expr>(op, std::vector<Val*>{first, second, seed, offset}, std::vector<Val*>{y});
  return y;
}

}  // namespace

TensorView* uniform(Fusion& fusion, const std::vector<Operand>& shape, Operand minval,
                    Operand maxval, DataType dtype, std::optional<Operand> rng_seed,
                    std::optional<Operand> rng_offset) {
  checkRandomDtype("uniform", dtype);
  Scalar* low = distributionParameter(fusion, minval, dtype, "uniform", "minval");
  Scalar* high = distributionParameter(fusion, maxval, dtype, "uniform", "maxval");
  const std::optional<double> a = constantValue(low);
  const std::optional<double> b = constantValue(high);
  BRAZE_USER_CHECK(!a || !b || *a <= *b) << "uniform: minval " << *a << " is greater than maxval "
                                         << *b << "; values are drawn from [minval, maxval)";
  return randomTensor(fusion, OpKind::Uniform, shape, low, high, dtype, rng_seed, rng_offset);
}

TensorView* normal(Fusion& fusion, const std::vector<Operand>& shape, Operand mean, Operand std,
                   DataType dtype, std::optional<Operand> rng_seed,
                   std::optional<Operand> rng_offset) {
  checkRandomDtype("normal", dtype);
  Scalar* center = distributionParameter(fusion, mean, dtype, "normal", "mean");
  Scalar* spread = distributionParameter(fusion, std, dtype, "normal", "std");
  const std::optional<double> s = constantValue(spread);
  BRAZE_USER_CHECK(!s || *s >= 0.0)
      << "normal: std is " << *s << "; the standard deviation must be non-negative";
  return randomTensor(fusion, OpKind::Normal, shape, center, spread, dtype, rng_seed, rng_offset);
}

}  // namespace braze
