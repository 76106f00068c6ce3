#pragma once

// Short dtype names for tables of test cases: `{tensor(I32), literal(F64)} -> F32` reads
// better than the spelled-out enumerators.

#include "braze/ir/data_type.h"

namespace braze::test::dtypes {

inline constexpr DataType B = DataType::Bool;
inline constexpr DataType I32 = DataType::Int32;
inline constexpr DataType I64 = DataType::Int64;
inline constexpr DataType F16 = DataType::Float16;
inline constexpr DataType BF16 = DataType::BFloat16;
inline constexpr DataType F32 = DataType::Float32;
inline constexpr DataType F64 = DataType::Float64;
inline constexpr DataType IDX = DataType::Index;
inline constexpr DataType E4M3 = DataType::Float8_e4m3fn;
inline constexpr DataType E5M2 = DataType::Float8_e5m2;

}  // namespace braze::test::dtypes
