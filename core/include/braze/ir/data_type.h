#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>

namespace braze {

/// Element types of tensors and scalars. `Index` is the type of extents and loop indices; it
/// is resolved to int32 or int64 when a kernel is generated and behaves as int64 everywhere
/// else (promotion, evaluation).
///
/// The float8 formats are PyTorch's torch.float8_e4m3fn (4 exponent bits, bias 7, 3 mantissa
/// bits, no infinity: the largest finite is 448 and all-ones is NaN) and torch.float8_e5m2
/// (IEEE-like: bias 15, 2 mantissa bits, infinities). Like float16 they are storage formats:
/// kernels and the evaluator compute in float32 and round once when storing, to nearest even,
/// as PyTorch's non-saturating `.to(float8)`: a float32 beyond the range becomes NaN for e4m3fn
/// and infinity for e5m2. Wider values (float64) are rounded to float32 first, as PyTorch does.
enum class DataType : uint8_t {
  Bool,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Index,
  Float8_e4m3fn,
  Float8_e5m2,
};

inline constexpr DataType kAllDataTypes[] = {
    DataType::Bool,          DataType::Int32,       DataType::Int64,   DataType::Float16,
    DataType::BFloat16,      DataType::Float32,     DataType::Float64, DataType::Index,
    DataType::Float8_e4m3fn, DataType::Float8_e5m2,
};

/// "float32", "bfloat16", ... ; the spelling used by the printer and in error messages.
std::string_view toString(DataType dtype);
std::ostream& operator<<(std::ostream& os, DataType dtype);

/// Parses the spelling of toString(); nullopt when unknown.
std::optional<DataType> parseDataType(std::string_view name);

/// Bytes per element (Index counts as 8).
int64_t sizeInBytes(DataType dtype);

bool isFloatingPoint(DataType dtype);
bool isIntegral(DataType dtype);  ///< Int32, Int64 and Index; not Bool.
bool isBoolean(DataType dtype);
/// Float16, BFloat16 and the float8 formats: stored narrow, computed in float32 by kernels.
bool isReducedPrecision(DataType dtype);
/// Float8_e4m3fn and Float8_e5m2.
bool isFloat8(DataType dtype);

/// PyTorch's type-promotion lattice between two *tensor* dtypes: bool < integers < floats;
/// within a category the wider type wins; float16 with bfloat16 gives float32; Index behaves
/// as int64. PyTorch refuses to promote float8 with any other float; here float8 follows the
/// same lattice instead (a float8 with a wider float gives the wider one, e4m3fn with e5m2 gives
/// float32, an integer with a float8 gives the float8), so that mixed arithmetic computes in the
/// more precise type and never silently narrows; cast explicitly to store float8.
DataType promoteTypes(DataType a, DataType b);

/// Where an operand of an elementwise op comes from, for PyTorch's three-tier promotion:
/// tensors; typed scalar Vals (fusion scalar inputs, extents, scalar results), which promote
/// like PyTorch's 0-d tensors; and C++ literals, which promote like Python scalars.
enum class OperandKind : uint8_t { Tensor, Scalar, Literal };

struct TypedOperand {
  DataType dtype;
  OperandKind kind;
};

/// Result dtype of an elementwise op, following PyTorch's `result_type`: each tier is promoted
/// within itself (a Literal counts as its category's default dtype: bool, int64, float32), and
/// a lower tier only matters when its category is higher than the tier above. So an int32
/// tensor plus 2 stays int32, a float16 tensor times 0.5 stays float16, an int tensor times 0.5
/// is float32, an int tensor times a float64 scalar Val is float64, and an Index extent plus 1
/// stays Index.
DataType promoteOperands(std::span<const TypedOperand> operands);
DataType promoteOperands(std::initializer_list<TypedOperand> operands);

/// The dtype unary floating ops (exp, sin, ...) compute in: the input's when floating, else
/// float32 (PyTorch's default dtype).
DataType floatingResultType(DataType dtype);

/// Category order used by promotion: 0 bool, 1 integral, 2 floating.
int typeCategory(DataType dtype);

}  // namespace braze
