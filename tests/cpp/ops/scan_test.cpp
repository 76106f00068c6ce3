// cumsum, cumprod, cummax, cummin builders: the scan Expr keeps x's shape and records its dim
// normalized; dtype rules as PyTorch's (int64 sums and products of integers and bools, float32
// accumulation of float16/bfloat16 through casts); errors for bad dims and dtypes.

#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "support/dtype_shorthands.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using namespace test::dtypes;
using test::throwsError;

const Expr* scanOf(const TensorView* y) {
  const Expr* def = y->definition();
  // Through the cast back to a reduced-precision or requested dtype.
  if (def != nullptr && def->op() == OpKind::Cast) def = def->input(0)->definition();
  return def;
}

TEST(ScanTest, KeepsShapeAndRecordsTheDim) {
  const std::pair<TensorView* (*)(TensorView*, int64_t), OpKind> selecting[] = {
      {&cummax, OpKind::Cummax}, {&cummin, OpKind::Cummin}};
  for (const auto& [builder, op] : selecting) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, 3, -1}});
    TensorView* y = builder(x, -2);
    ASSERT_NE(y->definition(), nullptr);
    EXPECT_EQ(y->definition()->op(), op);
    EXPECT_EQ(familyOf(op), OpFamily::Scan);
    EXPECT_EQ(y->definition()->attribute<int64_t>("dim"), 1);
    EXPECT_EQ(y->dtype(), F32);
    ASSERT_EQ(y->rank(), 3);
    for (int64_t d = 0; d < 3; ++d) {
      EXPECT_NE(y->axis(d), x->axis(d)) << "the scan owns its IterDomains";
      EXPECT_EQ(y->axis(d)->extent(), x->axis(d)->extent());
      EXPECT_FALSE(y->axis(d)->isReduction());
    }
  }
}

TEST(ScanTest, CumsumAndCumprodOfIntegersGiveInt64) {
  for (DataType dtype : {B, I32, I64}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = dtype, .sizes = {-1, -1}});
    TensorView* s = cumsum(x, 1);
    TensorView* p = cumprod(x, 0);
    EXPECT_EQ(s->dtype(), I64);
    EXPECT_EQ(p->dtype(), I64);
    EXPECT_EQ(s->definition()->op(), OpKind::Cumsum);
    EXPECT_EQ(s->definition()->input(0)->dtype(), I64) << "the input is cast first";
  }
}

TEST(ScanTest, ReducedPrecisionAccumulatesInFloat32) {
  for (DataType dtype : {F16, BF16}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = dtype, .sizes = {-1, -1}});
    TensorView* y = cumsum(x, 1);
    EXPECT_EQ(y->dtype(), dtype);
    ASSERT_EQ(y->definition()->op(), OpKind::Cast);
    const Expr* scan = scanOf(y);
    EXPECT_EQ(scan->op(), OpKind::Cumsum);
    EXPECT_EQ(scan->output(0)->dtype(), F32);
    // Selection is exact in any dtype: no casts.
    EXPECT_EQ(cummax(x, 0)->definition()->input(0), x);
  }
}

TEST(ScanTest, DtypeArgumentSetsTheResult) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = I32, .sizes = {-1}});
  EXPECT_EQ(cumsum(x, 0, I32)->dtype(), I32);
  EXPECT_EQ(cumsum(x, 0, F64)->dtype(), F64);
  EXPECT_EQ(scanOf(cumprod(x, 0, BF16))->output(0)->dtype(), F32);
}

TEST(ScanTest, ExpandedBroadcastDimBecomesAnIterationDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, 1}});
  TensorView* e = expand(x, {Operand(int64_t{-1}), Operand(int64_t{5})});
  TensorView* y = cumsum(e, 1);
  EXPECT_FALSE(y->axis(1)->isBroadcast());
  EXPECT_EQ(y->axis(1)->extent()->constantInt(), 5);
}

TEST(ScanTest, ZeroDimTensorIsItsOwnPrefix) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = I32, .sizes = {}});
  TensorView* y = cumsum(x, -1);
  EXPECT_EQ(y->rank(), 0);
  EXPECT_EQ(y->dtype(), I64);
  EXPECT_EQ(cummax(x, 0)->definition()->op(), OpKind::Set);
  EXPECT_TRUE(throwsError([&] { cummin(x, 1); }, {"cummin", "dim 1", "0-d", "-1 and 0"}));
}

TEST(ScanTest, PrintsHashesAndClones) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, -1}});
  fusion.addOutput(cumprod(x, 1));
  const std::string text = printMath(fusion);
  EXPECT_NE(text.find("cumprod("), std::string::npos) << text;
  EXPECT_NE(text.find("dim=1"), std::string::npos) << text;
  const std::unique_ptr<Fusion> copy = fusion.clone();
  EXPECT_EQ(printMath(*copy), text);
  EXPECT_EQ(structuralHash(*copy), structuralHash(fusion));

  Fusion other;
  TensorView* z = makeInputTensor(other, {.dtype = F32, .sizes = {-1, -1}});
  other.addOutput(cumprod(z, 0));
  EXPECT_NE(structuralHash(other), structuralHash(fusion)) << "the dim is part of the hash";
}

TEST(ScanTest, IndicesAreInt64ScansAlongTheSameDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = BF16, .sizes = {-1, 4, -1}});
  const ScanWithIndices result = cumminWithIndices(x, -2);
  EXPECT_EQ(result.values->definition()->op(), OpKind::Cummin);
  EXPECT_EQ(result.values->dtype(), BF16);
  EXPECT_EQ(result.indices->dtype(), I64);
  ASSERT_EQ(result.indices->rank(), 3);
  EXPECT_EQ(result.indices->axis(1)->extent(), x->axis(1)->extent());
  fusion.addOutput(result.indices);
  for (const Expr* expr : fusion.exprs()) {
    if (familyOf(expr->op()) == OpFamily::Scan) EXPECT_EQ(expr->attribute<int64_t>("dim"), 1);
  }
  Fusion scalar;
  TensorView* s = makeInputTensor(scalar, {.dtype = F32, .sizes = {}});
  EXPECT_EQ(cummaxWithIndices(s, 0).indices->rank(), 0);
  EXPECT_TRUE(throwsError([&] { cummaxWithIndices(x, 3); }, {"cummax", "3"}));
}

TEST(ScanTest, RefusesADimOutOfRange) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, -1}});
  EXPECT_TRUE(throwsError([&] { cumsum(x, 2); }, {"cumsum", "2", x->name()}));
  EXPECT_TRUE(throwsError([&] { cummax(x, -3); }, {"cummax", "-3"}));
}

TEST(ScanTest, RefusesABoolOrIndexDtype) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = I32, .sizes = {-1}});
  EXPECT_TRUE(throwsError([&] { cumsum(x, 0, B); }, {"cumsum", "dtype=bool", "int64"}));
  EXPECT_TRUE(throwsError([&] { cumprod(x, 0, DataType::Index); }, {"cumprod", "dtype=index"}));
}

TEST(ScanTest, RefusesANullTensor) {
  EXPECT_TRUE(throwsError([] { cumsum(nullptr, 0); }, {"cumsum: the input tensor is null"}));
  EXPECT_TRUE(throwsError([] { cummin(nullptr, 0); }, {"cummin: the input tensor is null"}));
}

}  // namespace
}  // namespace braze
