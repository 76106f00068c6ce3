#include "braze/ir/data_type.h"

#include <algorithm>

#include "braze/error.h"

namespace braze {

std::string_view toString(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
      return "bool";
    case DataType::Int32:
      return "int32";
    case DataType::Int64:
      return "int64";
    case DataType::Float16:
      return "float16";
    case DataType::BFloat16:
      return "bfloat16";
    case DataType::Float32:
      return "float32";
    case DataType::Float64:
      return "float64";
    case DataType::Index:
      return "index";
    case DataType::Float8_e4m3fn:
      return "float8_e4m3fn";
    case DataType::Float8_e5m2:
      return "float8_e5m2";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, DataType dtype) {
  return os << toString(dtype);
}

std::optional<DataType> parseDataType(std::string_view name) {
  for (DataType dtype : kAllDataTypes) {
    if (toString(dtype) == name) return dtype;
  }
  return std::nullopt;
}

int64_t sizeInBytes(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
      return 1;
    case DataType::Float16:
    case DataType::BFloat16:
      return 2;
    case DataType::Int32:
    case DataType::Float32:
      return 4;
    case DataType::Int64:
    case DataType::Float64:
    case DataType::Index:
      return 8;
  }
  return 0;
}

bool isFloatingPoint(DataType dtype) {
  return dtype == DataType::Float16 || dtype == DataType::BFloat16 || dtype == DataType::Float32 ||
         dtype == DataType::Float64 || isFloat8(dtype);
}

bool isIntegral(DataType dtype) {
  return dtype == DataType::Int32 || dtype == DataType::Int64 || dtype == DataType::Index;
}

bool isBoolean(DataType dtype) {
  return dtype == DataType::Bool;
}

bool isReducedPrecision(DataType dtype) {
  return dtype == DataType::Float16 || dtype == DataType::BFloat16 || isFloat8(dtype);
}

bool isFloat8(DataType dtype) {
  return dtype == DataType::Float8_e4m3fn || dtype == DataType::Float8_e5m2;
}

int typeCategory(DataType dtype) {
  if (isBoolean(dtype)) return 0;
  if (isIntegral(dtype)) return 1;
  return 2;
}

namespace {

// Index promotes like int64 but is kept when both sides are Index, so extent arithmetic stays
// in the index type.
DataType normalizeIndex(DataType dtype) {
  return dtype == DataType::Index ? DataType::Int64 : dtype;
}

DataType defaultTypeOfCategory(int category) {
  switch (category) {
    case 0:
      return DataType::Bool;
    case 1:
      return DataType::Int64;
    default:
      return DataType::Float32;
  }
}

// PyTorch's combine_categories: the higher tier wins unless the lower one brings a higher
// category (a float into an integer or bool tier, or anything into a bool tier).
std::optional<DataType> combineTiers(std::optional<DataType> higher,
                                     std::optional<DataType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (isFloatingPoint(*higher)) return higher;
  if (isBoolean(*higher) || isFloatingPoint(*lower)) return promoteTypes(*higher, *lower);
  return higher;
}

}  // namespace

DataType promoteTypes(DataType a, DataType b) {
  if (a == b) return a;
  const DataType na = normalizeIndex(a);
  const DataType nb = normalizeIndex(b);
  if (na == nb) return DataType::Int64;  // Index with Int64
  const int ca = typeCategory(na);
  const int cb = typeCategory(nb);
  if (ca != cb) return ca > cb ? na : nb;
  if (ca == 2) {
    // float16 and bfloat16 (e4m3fn and e5m2) have no common type of their width.
    if (sizeInBytes(na) == sizeInBytes(nb)) return DataType::Float32;
    return sizeInBytes(na) > sizeInBytes(nb) ? na : nb;
  }
  return sizeInBytes(na) >= sizeInBytes(nb) ? na : nb;
}

DataType promoteOperands(std::initializer_list<TypedOperand> operands) {
  return promoteOperands(std::span<const TypedOperand>(operands.begin(), operands.size()));
}

DataType promoteOperands(std::span<const TypedOperand> operands) {
  BRAZE_INTERNAL_CHECK(!operands.empty()) << "promoteOperands needs at least one operand";
  std::optional<DataType> tiers[3];
  for (const TypedOperand& operand : operands) {
    const DataType dtype = operand.kind == OperandKind::Literal
                               ? defaultTypeOfCategory(typeCategory(operand.dtype))
                               : operand.dtype;
    std::optional<DataType>& tier = tiers[static_cast<int>(operand.kind)];
    tier = tier ? promoteTypes(*tier, dtype) : dtype;
  }
  return *combineTiers(tiers[0], combineTiers(tiers[1], tiers[2]));
}

DataType floatingResultType(DataType dtype) {
  return isFloatingPoint(dtype) ? dtype : DataType::Float32;
}

}  // namespace braze
