// Data types: spelling, sizes, categories and PyTorch's type promotion. The expected tables are
// written out by hand from PyTorch's torch.promote_types and torch.result_type.

#include "braze/ir/data_type.h"
#include "support/dtype_shorthands.h"

#include <sstream>

#include <gtest/gtest.h>

namespace braze {
namespace {

using namespace test::dtypes;

TEST(DataTypeTest, SpellingRoundTrips) {
  EXPECT_EQ(toString(B), "bool");
  EXPECT_EQ(toString(I32), "int32");
  EXPECT_EQ(toString(I64), "int64");
  EXPECT_EQ(toString(F16), "float16");
  EXPECT_EQ(toString(BF16), "bfloat16");
  EXPECT_EQ(toString(F32), "float32");
  EXPECT_EQ(toString(F64), "float64");
  EXPECT_EQ(toString(IDX), "index");
  EXPECT_EQ(toString(E4M3), "float8_e4m3fn");
  EXPECT_EQ(toString(E5M2), "float8_e5m2");
  for (DataType dtype : kAllDataTypes) {
    EXPECT_EQ(parseDataType(toString(dtype)), dtype);
    std::ostringstream os;
    os << dtype;
    EXPECT_EQ(os.str(), toString(dtype));
  }
  EXPECT_EQ(parseDataType("float"), std::nullopt);
  EXPECT_EQ(parseDataType(""), std::nullopt);
}

TEST(DataTypeTest, SizesInBytes) {
  EXPECT_EQ(sizeInBytes(B), 1);
  EXPECT_EQ(sizeInBytes(I32), 4);
  EXPECT_EQ(sizeInBytes(I64), 8);
  EXPECT_EQ(sizeInBytes(F16), 2);
  EXPECT_EQ(sizeInBytes(BF16), 2);
  EXPECT_EQ(sizeInBytes(F32), 4);
  EXPECT_EQ(sizeInBytes(F64), 8);
  EXPECT_EQ(sizeInBytes(IDX), 8);
  EXPECT_EQ(sizeInBytes(E4M3), 1);
  EXPECT_EQ(sizeInBytes(E5M2), 1);
}

TEST(DataTypeTest, Categories) {
  struct Row {
    DataType dtype;
    bool floating, integral, boolean, reduced;
    int category;
  };
  const Row rows[] = {
      {B, false, false, true, false, 0},   {I32, false, true, false, false, 1},
      {I64, false, true, false, false, 1}, {IDX, false, true, false, false, 1},
      {F16, true, false, false, true, 2},  {BF16, true, false, false, true, 2},
      {F32, true, false, false, false, 2}, {F64, true, false, false, false, 2},
      {E4M3, true, false, false, true, 2}, {E5M2, true, false, false, true, 2},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(toString(row.dtype));
    EXPECT_EQ(isFloatingPoint(row.dtype), row.floating);
    EXPECT_EQ(isIntegral(row.dtype), row.integral);
    EXPECT_EQ(isBoolean(row.dtype), row.boolean);
    EXPECT_EQ(isReducedPrecision(row.dtype), row.reduced);
    EXPECT_EQ(typeCategory(row.dtype), row.category);
    EXPECT_EQ(isFloat8(row.dtype), row.dtype == E4M3 || row.dtype == E5M2);
  }
}

// PyTorch refuses to promote float8 with other floats; Braze extends its lattice (see
// promoteTypes): the wider float wins, the two float8 formats meet in float32, integers and
// bools take the float8.
TEST(DataTypeTest, Float8PromotesByWidth) {
  for (DataType f8 : {E4M3, E5M2}) {
    SCOPED_TRACE(toString(f8));
    EXPECT_EQ(promoteTypes(f8, f8), f8);
    for (DataType other : {B, I32, I64, IDX}) {
      EXPECT_EQ(promoteTypes(f8, other), f8);
      EXPECT_EQ(promoteTypes(other, f8), f8);
    }
    for (DataType wider : {F16, BF16, F32, F64}) {
      EXPECT_EQ(promoteTypes(f8, wider), wider);
      EXPECT_EQ(promoteTypes(wider, f8), wider);
    }
  }
  EXPECT_EQ(promoteTypes(E4M3, E5M2), F32);
  EXPECT_EQ(promoteTypes(E5M2, E4M3), F32);
  // A Python float scalar does not widen a float8 tensor, as with float16.
  EXPECT_EQ(promoteOperands({{E4M3, OperandKind::Tensor}, {F64, OperandKind::Literal}}), E4M3);
}

// torch.promote_types over the dtypes both libraries have.
TEST(DataTypeTest, PromoteTypesMatchesPyTorchTable) {
  const DataType order[] = {B, I32, I64, F16, BF16, F32, F64};
  const DataType table[7][7] = {
      //        b     i32   i64   f16   bf16  f32   f64
      /* b  */ {B, I32, I64, F16, BF16, F32, F64},
      /* i32*/ {I32, I32, I64, F16, BF16, F32, F64},
      /* i64*/ {I64, I64, I64, F16, BF16, F32, F64},
      /* f16*/ {F16, F16, F16, F16, F32, F32, F64},
      /* bf16*/ {BF16, BF16, BF16, F32, BF16, F32, F64},
      /* f32*/ {F32, F32, F32, F32, F32, F32, F64},
      /* f64*/ {F64, F64, F64, F64, F64, F64, F64},
  };
  for (int i = 0; i < 7; ++i) {
    for (int j = 0; j < 7; ++j) {
      EXPECT_EQ(promoteTypes(order[i], order[j]), table[i][j])
          << toString(order[i]) << " with " << toString(order[j]);
    }
  }
}

TEST(DataTypeTest, IndexPromotesAsInt64ButStaysIndexWithItself) {
  EXPECT_EQ(promoteTypes(IDX, IDX), IDX);
  EXPECT_EQ(promoteTypes(IDX, I64), I64);
  EXPECT_EQ(promoteTypes(I64, IDX), I64);
  EXPECT_EQ(promoteTypes(IDX, I32), I64);
  EXPECT_EQ(promoteTypes(I32, IDX), I64);
  EXPECT_EQ(promoteTypes(IDX, B), I64);
  EXPECT_EQ(promoteTypes(IDX, F16), F16);
  EXPECT_EQ(promoteTypes(F32, IDX), F32);
}

TypedOperand tensor(DataType dtype) {
  return {dtype, OperandKind::Tensor};
}
TypedOperand scalar(DataType dtype) {
  return {dtype, OperandKind::Scalar};
}
TypedOperand literal(DataType dtype) {
  return {dtype, OperandKind::Literal};
}

// torch.result_type with tensors, 0-d tensors (scalar Vals) and Python scalars (literals).
TEST(DataTypeTest, PromoteOperandsFollowsResultType) {
  // Tensors among themselves.
  EXPECT_EQ(promoteOperands({tensor(I32), tensor(I64)}), I64);
  EXPECT_EQ(promoteOperands({tensor(F16), tensor(BF16)}), F32);
  EXPECT_EQ(promoteOperands({tensor(F32), tensor(F64)}), F64);
  EXPECT_EQ(promoteOperands({tensor(B), tensor(I32)}), I32);
  EXPECT_EQ(promoteOperands({tensor(I64), tensor(F16)}), F16);
  // A literal of the same or a lower category never widens a tensor.
  EXPECT_EQ(promoteOperands({tensor(I32), literal(I64)}), I32);  // int32 tensor + 2
  EXPECT_EQ(promoteOperands({tensor(F16), literal(F64)}), F16);  // float16 tensor * 2.0
  EXPECT_EQ(promoteOperands({tensor(BF16), literal(F64)}), BF16);
  EXPECT_EQ(promoteOperands({tensor(F32), literal(I64)}), F32);
  EXPECT_EQ(promoteOperands({tensor(I64), literal(B)}), I64);
  EXPECT_EQ(promoteOperands({tensor(F16), literal(B)}), F16);
  // A literal of a higher category gives that category's default dtype.
  EXPECT_EQ(promoteOperands({tensor(I32), literal(F64)}), F32);  // int tensor * 0.5
  EXPECT_EQ(promoteOperands({tensor(I64), literal(F64)}), F32);
  EXPECT_EQ(promoteOperands({tensor(B), literal(I64)}), I64);  // bool tensor + 1
  EXPECT_EQ(promoteOperands({tensor(B), literal(F64)}), F32);
  EXPECT_EQ(promoteOperands({tensor(B), literal(B)}), B);
  // A typed scalar of a higher category keeps its own dtype, as a 0-d tensor does.
  EXPECT_EQ(promoteOperands({tensor(I32), scalar(F64)}), F64);
  EXPECT_EQ(promoteOperands({tensor(B), scalar(I32)}), I32);
  EXPECT_EQ(promoteOperands({tensor(F16), scalar(F64)}), F16);
  EXPECT_EQ(promoteOperands({tensor(I32), scalar(I64)}), I32);
  // Order does not matter, and several of each kind combine.
  EXPECT_EQ(promoteOperands({literal(F64), tensor(I32)}), F32);
  EXPECT_EQ(promoteOperands({tensor(F16), tensor(I32), literal(F64)}), F16);
  EXPECT_EQ(promoteOperands({tensor(I32), tensor(I32), literal(F64), literal(I64)}), F32);
  EXPECT_EQ(promoteOperands({tensor(I32), literal(I64), tensor(I64)}), I64);
  // Without tensors, typed scalars win over literals of their category or lower.
  EXPECT_EQ(promoteOperands({scalar(I32), scalar(F64)}), F64);
  EXPECT_EQ(promoteOperands({scalar(IDX), literal(I64)}), IDX);  // extent + 1
  EXPECT_EQ(promoteOperands({scalar(I32), literal(F64)}), F32);
  EXPECT_EQ(promoteOperands({scalar(IDX), scalar(IDX)}), IDX);
  EXPECT_EQ(promoteOperands({literal(F64), literal(I64)}), F32);
  EXPECT_EQ(promoteOperands({scalar(B)}), B);
  EXPECT_EQ(promoteOperands({tensor(F16)}), F16);
}

TEST(DataTypeTest, FloatingResultType) {
  EXPECT_EQ(floatingResultType(B), F32);
  EXPECT_EQ(floatingResultType(I32), F32);
  EXPECT_EQ(floatingResultType(I64), F32);
  EXPECT_EQ(floatingResultType(IDX), F32);
  EXPECT_EQ(floatingResultType(F16), F16);
  EXPECT_EQ(floatingResultType(BF16), BF16);
  EXPECT_EQ(floatingResultType(F32), F32);
  EXPECT_EQ(floatingResultType(F64), F64);
}

}  // namespace
}  // namespace braze
