// Elementwise op builders: the Exprs they create, result dtypes (PyTorch's promotion), the
// broadcast output shape, constant folding and simplification of scalar arithmetic, and every
// validation error.

#include "braze/ops/elementwise.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/dtype_shorthands.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

using namespace test::dtypes;

constexpr DataType kTensorDtypes[] = {B, I32, I64, F16, BF16, F32, F64};

TensorView* input(Fusion& fusion, DataType dtype, std::vector<int64_t> sizes) {
  return makeInputTensor(fusion, {.dtype = dtype, .sizes = std::move(sizes)});
}

/// A TensorView over hand-made IterDomains, for domains no input spec can describe.
TensorView* tensorOf(Fusion& fusion, std::vector<IterDomain*> domain, DataType dtype = F32) {
  return fusion.create<TensorView>(dtype, std::move(domain));
}

IterDomain* iteration(Fusion& fusion, Scalar* extent) {
  return fusion.create<IterDomain>(extent, IterType::Iteration);
}

IterDomain* expandedBroadcast(Fusion& fusion, Scalar* expanded) {
  return fusion.create<IterDomain>(fusion.constantIndex(1), IterType::Broadcast, expanded);
}

Scalar* extentOf(const TensorView* tv, int64_t dim) {
  return tv->logicalNoReductions().at(static_cast<size_t>(dim))->extent();
}

std::optional<int64_t> constantExtent(const TensorView* tv, int64_t dim) {
  return extentOf(tv, dim)->constantInt();
}

// ---------------------------------------------------------------------------------------------
// Exprs.

TEST(ElementwiseTest, EveryUnaryBuilderCreatesItsOp) {
  using Unary = TensorView* (*)(TensorView*);
  const std::pair<OpKind, Unary> builders[] = {
      {OpKind::Neg, &neg},
      {OpKind::Abs, &abs},
      {OpKind::Exp, &exp},
      {OpKind::Exp2, &exp2},
      {OpKind::Expm1, &expm1},
      {OpKind::Log, &log},
      {OpKind::Log2, &log2},
      {OpKind::Log1p, &log1p},
      {OpKind::Sqrt, &sqrt},
      {OpKind::Rsqrt, &rsqrt},
      {OpKind::Reciprocal, &reciprocal},
      {OpKind::Sin, &sin},
      {OpKind::Cos, &cos},
      {OpKind::Tan, &tan},
      {OpKind::Tanh, &tanh},
      {OpKind::Sigmoid, &sigmoid},
      {OpKind::Relu, &relu},
      {OpKind::Silu, &silu},
      {OpKind::Erf, &erf},
      {OpKind::Erfc, &erfc},
      {OpKind::Floor, &floor},
      {OpKind::Ceil, &ceil},
      {OpKind::Round, &round},
      {OpKind::Trunc, &trunc},
      {OpKind::Sign, &sign},
      {OpKind::IsNan, &isnan},
      {OpKind::IsInf, &isinf},
      {OpKind::IsFinite, &isfinite},
      {OpKind::Signbit, &signbit},
      {OpKind::LogicalNot, &logical_not},
  };
  for (const auto& [op, build] : builders) {
    Fusion fusion;
    TensorView* x = input(fusion, F16, {-1, 4});
    TensorView* y = build(x);
    ASSERT_NE(y->definition(), nullptr) << op;
    EXPECT_EQ(y->definition()->op(), op);
    EXPECT_EQ(y->definition()->inputs(), std::vector<Val*>{x}) << op;
    EXPECT_EQ(y->definition()->outputs(), std::vector<Val*>{y}) << op;
    EXPECT_TRUE(y->definition()->attributes().empty()) << op;
    EXPECT_EQ(y->rank(), 2) << op;
  }
  Fusion fusion;
  TensorView* i = input(fusion, I32, {-1});
  EXPECT_EQ(bitwise_not(i)->definition()->op(), OpKind::BitwiseNot);
}

TEST(ElementwiseTest, EveryBinaryBuilderCreatesItsOp) {
  using Binary = TensorView* (*)(TensorView*, TensorView*);
  const std::pair<OpKind, Binary> builders[] = {
      {OpKind::Add, &add},
      {OpKind::Sub, &sub},
      {OpKind::Mul, &mul},
      {OpKind::Div, &div},
      {OpKind::TrueDiv, &truediv},
      {OpKind::Remainder, &remainder},
      {OpKind::Fmod, &fmod},
      {OpKind::CeilDiv, &ceil_div},
      {OpKind::Pow, &pow},
      {OpKind::Maximum, &maximum},
      {OpKind::Minimum, &minimum},
      {OpKind::Atan2, &atan2},
      {OpKind::Eq, &eq},
      {OpKind::Ne, &ne},
      {OpKind::Lt, &lt},
      {OpKind::Le, &le},
      {OpKind::Gt, &gt},
      {OpKind::Ge, &ge},
      {OpKind::LogicalAnd, &logical_and},
      {OpKind::LogicalOr, &logical_or},
      {OpKind::LogicalXor, &logical_xor},
      {OpKind::BitwiseAnd, &bitwise_and},
      {OpKind::BitwiseOr, &bitwise_or},
      {OpKind::BitwiseXor, &bitwise_xor},
      {OpKind::LeftShift, &left_shift},
      {OpKind::RightShift, &right_shift},
      {OpKind::Gcd, &gcd},
      {OpKind::LogicalRightShift, &logical_right_shift},
  };
  for (const auto& [op, build] : builders) {
    Fusion fusion;
    TensorView* a = input(fusion, I64, {-1});
    TensorView* b = input(fusion, I64, {-1});
    TensorView* y = build(a, b);
    EXPECT_EQ(y->definition()->op(), op);
    EXPECT_EQ(y->definition()->inputs(), (std::vector<Val*>{a, b})) << op;
  }
}

TEST(ElementwiseTest, ConstantsBecomeScalarsOfTheirNaturalDtype) {
  Fusion fusion;
  TensorView* x = input(fusion, F16, {-1});
  TensorView* y = mul(x, 2.5);
  ASSERT_EQ(y->definition()->inputs().size(), 2u);
  EXPECT_EQ(y->definition()->input(0), x);
  auto* constant = y->definition()->input(1)->as<Scalar>();
  EXPECT_EQ(constant->dtype(), F64);
  EXPECT_TRUE(identical(*constant->value(), ScalarValue(2.5)));

  TensorView* z = sub(3, x);  // constant first
  auto* three = z->definition()->input(0)->as<Scalar>();
  EXPECT_EQ(three->dtype(), I64);
  EXPECT_EQ(three->constantInt(), 3);
  EXPECT_EQ(z->definition()->input(1), x);
}

TEST(ElementwiseTest, LiteralZeroIsAConstantNotANullTensor) {
  Fusion fusion;
  TensorView* x = input(fusion, F32, {-1});
  Scalar* s = makeInputScalar(fusion, F32);
  TensorView* y = maximum(x, 0);
  EXPECT_TRUE(y->definition()->input(1)->as<Scalar>()->isConstantEqualTo(0));
  EXPECT_EQ(add(0, x)->definition()->input(1), x);
  EXPECT_TRUE(mul(s, 0)->isA<Scalar>());
  EXPECT_TRUE(sub(0, s)->isA<Scalar>());
}

TEST(ElementwiseTest, GeluCarriesItsApproximation) {
  Fusion fusion;
  TensorView* x = input(fusion, BF16, {-1});
  Expr* exact = gelu(x)->definition();
  EXPECT_EQ(exact->op(), OpKind::Gelu);
  EXPECT_EQ(exact->attribute<std::string>("approximate"), "none");
  Expr* approximate = gelu(x, GeluApproximation::Tanh)->definition();
  EXPECT_EQ(approximate->attribute<std::string>("approximate"), "tanh");
  EXPECT_EQ(gelu(x)->dtype(), BF16);
}

TEST(ElementwiseTest, CastTakesTheTargetDtypeAndAlwaysCreatesAnOp) {
  Fusion fusion;
  TensorView* x = input(fusion, F16, {-1, -1});
  TensorView* y = cast(x, F32);
  EXPECT_EQ(y->dtype(), F32);
  EXPECT_EQ(y->definition()->op(), OpKind::Cast);
  EXPECT_TRUE(y->definition()->attributes().empty());
  TensorView* same = cast(x, F16);
  EXPECT_NE(same, x);
  EXPECT_EQ(same->definition()->op(), OpKind::Cast);
  EXPECT_EQ(same->dtype(), F16);

  Scalar* s = makeInputScalar(fusion, I64);
  Val* index = cast(s, IDX);
  EXPECT_TRUE(index->isA<Scalar>());
  EXPECT_EQ(index->dtype(), IDX);
  EXPECT_EQ(index->definition()->op(), OpKind::Cast);
}

// ---------------------------------------------------------------------------------------------
// Result dtypes.

TEST(ElementwiseTest, UnaryResultDtypes) {
  for (DataType dtype : kTensorDtypes) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = input(fusion, dtype, {-1});
    const DataType floating =
        (dtype == F16 || dtype == BF16 || dtype == F32 || dtype == F64) ? dtype : F32;
    for (TensorView* y : {abs(x), relu(x), floor(x), ceil(x), round(x), trunc(x), sign(x)}) {
      EXPECT_EQ(y->dtype(), dtype) << y->definition()->op();
    }
    for (TensorView* y :
         {exp(x), exp2(x), expm1(x), log(x), log2(x), log1p(x), sqrt(x), rsqrt(x), reciprocal(x),
          sin(x), cos(x), tan(x), tanh(x), sigmoid(x), silu(x), erf(x), erfc(x), gelu(x)}) {
      EXPECT_EQ(y->dtype(), floating) << y->definition()->op();
    }
    for (TensorView* y : {isnan(x), isinf(x), isfinite(x), logical_not(x)}) {
      EXPECT_EQ(y->dtype(), B) << y->definition()->op();
    }
    if (dtype != B) {
      EXPECT_EQ(neg(x)->dtype(), dtype);
    }
    if (dtype == B || dtype == I32 || dtype == I64) {
      EXPECT_EQ(bitwise_not(x)->dtype(), dtype);
    }
  }
}

struct BinaryDtypeCase {
  std::string name;
  std::function<Val*(Fusion&)> build;
  DataType expected;
};

TEST(ElementwiseTest, BinaryResultDtypesFollowPyTorch) {
  auto t = [](Fusion& f, DataType dtype) { return input(f, dtype, {-1}); };
  auto s = [](Fusion& f, DataType dtype) { return makeInputScalar(f, dtype); };
  const std::vector<BinaryDtypeCase> cases = {
      {"int32 + int64", [&](Fusion& f) { return add(t(f, I32), t(f, I64)); }, I64},
      {"f16 + bf16", [&](Fusion& f) { return add(t(f, F16), t(f, BF16)); }, F32},
      {"int tensor * 0.5", [&](Fusion& f) { return mul(t(f, I32), 0.5); }, F32},
      {"int64 tensor * 0.5", [&](Fusion& f) { return mul(t(f, I64), 0.5); }, F32},
      {"f16 tensor * 2.0", [&](Fusion& f) { return mul(t(f, F16), 2.0); }, F16},
      {"bf16 tensor + 1", [&](Fusion& f) { return add(t(f, BF16), 1); }, BF16},
      {"bool tensor + 1", [&](Fusion& f) { return add(t(f, B), 1); }, I64},
      {"bool tensor + 1.5", [&](Fusion& f) { return add(t(f, B), 1.5); }, F32},
      {"bool tensor + true", [&](Fusion& f) { return add(t(f, B), true); }, B},
      {"int32 tensor + 2", [&](Fusion& f) { return add(t(f, I32), 2); }, I32},
      {"f32 + f64 tensors", [&](Fusion& f) { return add(t(f, F32), t(f, F64)); }, F64},
      {"f16 tensor + f64 scalar", [&](Fusion& f) { return add(t(f, F16), s(f, F64)); }, F16},
      // A typed scalar Val promotes like a 0-d tensor: its float64 wins over an int tensor.
      {"int32 tensor + f64 scalar", [&](Fusion& f) { return add(t(f, I32), s(f, F64)); }, F64},
      {"int32 tensor + 0.5", [&](Fusion& f) { return add(t(f, I32), 0.5); }, F32},
      {"int32 tensor + int64 scalar", [&](Fusion& f) { return add(t(f, I32), s(f, I64)); }, I32},
      {"index + 1", [&](Fusion& f) { return add(s(f, IDX), 1); }, IDX},
      {"index + index", [&](Fusion& f) { return add(s(f, IDX), s(f, IDX)); }, IDX},
      {"index * int64 scalar", [&](Fusion& f) { return mul(s(f, IDX), s(f, I64)); }, I64},
      {"int32 scalar + 2", [&](Fusion& f) { return add(s(f, I32), 2); }, I32},
      {"int64 scalar * 0.5", [&](Fusion& f) { return mul(s(f, I64), 0.5); }, F32},
      {"f32 scalar * 2.0", [&](Fusion& f) { return mul(s(f, F32), 2.0); }, F32},
      {"f64 scalar * 2", [&](Fusion& f) { return mul(s(f, F64), 2); }, F64},
      {"int32 / int32", [&](Fusion& f) { return div(t(f, I32), t(f, I32)); }, I32},
      {"int32 truediv int32", [&](Fusion& f) { return truediv(t(f, I32), t(f, I32)); }, F32},
      {"f16 truediv 2", [&](Fusion& f) { return truediv(t(f, F16), 2); }, F16},
      {"index truediv 2", [&](Fusion& f) { return truediv(s(f, IDX), 2); }, F32},
      {"atan2 of ints", [&](Fusion& f) { return atan2(t(f, I64), t(f, I32)); }, F32},
      {"atan2 bf16 f16", [&](Fusion& f) { return atan2(t(f, BF16), t(f, F16)); }, F32},
      {"int pow 2", [&](Fusion& f) { return pow(t(f, I32), 2); }, I32},
      {"int pow 0.5", [&](Fusion& f) { return pow(t(f, I32), 0.5); }, F32},
      {"remainder", [&](Fusion& f) { return remainder(t(f, I32), t(f, I64)); }, I64},
      {"maximum f16 0", [&](Fusion& f) { return maximum(t(f, F16), 0); }, F16},
      {"ceil_div index", [&](Fusion& f) { return ceil_div(s(f, IDX), 4); }, IDX},
      {"eq", [&](Fusion& f) { return eq(t(f, F32), 1); }, B},
      {"lt scalars", [&](Fusion& f) { return lt(s(f, IDX), 3); }, B},
      {"logical_and", [&](Fusion& f) { return logical_and(t(f, F16), t(f, I32)); }, B},
      {"bitwise_and bools", [&](Fusion& f) { return bitwise_and(t(f, B), t(f, B)); }, B},
      {"bitwise_or bool int", [&](Fusion& f) { return bitwise_or(t(f, B), t(f, I32)); }, I32},
      {"left_shift int32 1", [&](Fusion& f) { return left_shift(t(f, I32), 1); }, I32},
      {"right_shift by int64", [&](Fusion& f) { return right_shift(t(f, I32), t(f, I64)); }, I64},
      {"gcd int32 int32", [&](Fusion& f) { return gcd(t(f, I32), t(f, I32)); }, I32},
      {"gcd int32 int64", [&](Fusion& f) { return gcd(t(f, I32), t(f, I64)); }, I64},
      {"gcd int32 12", [&](Fusion& f) { return gcd(t(f, I32), 12); }, I32},
      {"gcd index", [&](Fusion& f) { return gcd(s(f, IDX), 4); }, IDX},
      {"nextafter f32 f32", [&](Fusion& f) { return nextafter(t(f, F32), t(f, F32)); }, F32},
      {"nextafter f32 f64", [&](Fusion& f) { return nextafter(t(f, F32), t(f, F64)); }, F64},
      {"nextafter f32 1.0", [&](Fusion& f) { return nextafter(t(f, F32), 1.0); }, F32},
      {"nextafter f64 0", [&](Fusion& f) { return nextafter(t(f, F64), 0); }, F64},
      {"nextafter int32 f32", [&](Fusion& f) { return nextafter(t(f, I32), t(f, F32)); }, F32},
      {"nextafter f16 f32", [&](Fusion& f) { return nextafter(t(f, F16), t(f, F32)); }, F32},
      {"logical_right_shift int32 1", [&](Fusion& f) { return logical_right_shift(t(f, I32), 1); },
       I32},
      {"logical_right_shift by int64",
       [&](Fusion& f) { return logical_right_shift(t(f, I32), t(f, I64)); }, I64},
  };
  for (const BinaryDtypeCase& c : cases) {
    Fusion fusion;
    EXPECT_EQ(c.build(fusion)->dtype(), c.expected) << c.name;
  }
}

TEST(ElementwiseTest, TernaryResultDtypes) {
  Fusion fusion;
  TensorView* mask = input(fusion, B, {-1});
  TensorView* h = input(fusion, F16, {-1});
  TensorView* i = input(fusion, I32, {-1});
  Scalar* s = makeInputScalar(fusion, F64);
  EXPECT_EQ(where(mask, 1.0, 0.0)->dtype(), F32);  // Python floats: the default dtype
  EXPECT_EQ(where(mask, 1, 2)->dtype(), I64);
  EXPECT_EQ(where(mask, true, false)->dtype(), B);
  EXPECT_EQ(where(mask, h, 0.0)->dtype(), F16);
  EXPECT_EQ(where(mask, i, 0.5)->dtype(), F32);
  EXPECT_EQ(where(mask, i, h)->dtype(), F16);
  EXPECT_EQ(where(mask, s, 0)->dtype(), F64);
  EXPECT_EQ(clamp(i, 0, 6)->dtype(), I32);
  EXPECT_EQ(clamp(i, 0.5, 6)->dtype(), F32);
  EXPECT_EQ(clamp(h, -1, 1)->dtype(), F16);
  EXPECT_EQ(lerp(h, h, 0.25)->dtype(), F16);
  EXPECT_EQ(lerp(h, input(fusion, F32, {-1}), 0.25)->dtype(), F32);
  EXPECT_EQ(lerp(i, 1.5, 0.5)->dtype(), F32);  // an int start with a float end is float32
  EXPECT_EQ(addcmul(h, h, h)->dtype(), F16);
  EXPECT_EQ(addcmul(i, i, i, 2)->dtype(), I32);
  EXPECT_EQ(addcmul(i, i, i, 0.5)->dtype(), F32);

  Expr* expr = addcmul(h, i, h, 0.5)->definition();
  EXPECT_EQ(expr->op(), OpKind::Addcmul);
  ASSERT_EQ(expr->inputs().size(), 4u);
  EXPECT_EQ(expr->input(0), h);
  EXPECT_EQ(expr->input(1), i);
  EXPECT_TRUE(expr->input(3)->as<Scalar>()->isConstant());
  EXPECT_EQ(where(mask, h, 0.0)->definition()->input(0), mask);
  EXPECT_EQ(clamp(h, -1, 1)->definition()->op(), OpKind::Clamp);
  EXPECT_EQ(lerp(h, h, 0.5)->definition()->op(), OpKind::Lerp);
}

// ---------------------------------------------------------------------------------------------
// Shapes.

TEST(ElementwiseTest, OutputGetsFreshIterDomainsWithTheOperandsExtents) {
  Fusion fusion;
  TensorView* a = input(fusion, F32, {-1, -1});
  TensorView* b = input(fusion, F32, {-1, -1});
  TensorView* y = add(a, b);
  ASSERT_EQ(y->nDims(), 2);
  for (int64_t d = 0; d < 2; ++d) {
    EXPECT_TRUE(y->axis(d)->isIteration());
    EXPECT_NE(y->axis(d), a->axis(d));
    EXPECT_NE(y->axis(d), b->axis(d));
    EXPECT_EQ(y->axis(d)->extent(), a->axis(d)->extent());  // the first operand's
  }
  // A second op over the same input gets its own IterDomains too.
  TensorView* z = add(a, b);
  EXPECT_NE(z->axis(0), y->axis(0));
  TensorView* e = exp(a);
  EXPECT_NE(e->axis(1), a->axis(1));
  EXPECT_EQ(e->axis(1)->extent(), a->axis(1)->extent());
  EXPECT_EQ(e->loop(), e->logical());
}

TEST(ElementwiseTest, RanksBroadcastFromTheRight) {
  Fusion fusion;
  TensorView* matrix = input(fusion, F32, {-1, -1});
  TensorView* row = input(fusion, F32, {-1});
  TensorView* y = add(matrix, row);
  ASSERT_EQ(y->rank(), 2);
  EXPECT_EQ(extentOf(y, 0), extentOf(matrix, 0));
  EXPECT_EQ(extentOf(y, 1), extentOf(matrix, 1));
  TensorView* z = add(row, matrix);
  ASSERT_EQ(z->rank(), 2);
  EXPECT_EQ(extentOf(z, 0), extentOf(matrix, 0));
  EXPECT_EQ(extentOf(z, 1), extentOf(row, 0));  // first operand with an Iteration dim there

  TensorView* scalar_tensor = input(fusion, F32, {});
  EXPECT_EQ(mul(scalar_tensor, matrix)->rank(), 2);
  TensorView* zero_d = mul(scalar_tensor, scalar_tensor);
  EXPECT_EQ(zero_d->rank(), 0);
  EXPECT_EQ(zero_d->definition()->op(), OpKind::Mul);

  TensorView* x4 = input(fusion, F32, {2, 1, -1, 5});
  TensorView* x2 = input(fusion, F32, {3, 1});
  TensorView* w = add(x4, x2);
  ASSERT_EQ(w->rank(), 4);
  EXPECT_EQ(constantExtent(w, 0), 2);
  EXPECT_EQ(constantExtent(w, 1), 1);
  EXPECT_TRUE(w->axis(1)->isBroadcast());
  EXPECT_EQ(constantExtent(w, 2), 3);  // the symbolic size is checked when evaluated
  EXPECT_EQ(constantExtent(w, 3), 5);
}

TEST(ElementwiseTest, ScalarOperandsDoNotShapeTheResult) {
  Fusion fusion;
  TensorView* x = input(fusion, F32, {-1, 3});
  Scalar* s = makeInputScalar(fusion, F32);
  TensorView* y = add(x, s);
  EXPECT_EQ(y->rank(), 2);
  EXPECT_EQ(y->definition()->input(1), s);
  Val* v = add(Operand(s), Operand(x));
  ASSERT_TRUE(v->isA<TensorView>());
  EXPECT_EQ(v->as<TensorView>()->rank(), 2);
}

TEST(ElementwiseTest, BroadcastDimsTakeTheOtherOperandsExtent) {
  Fusion fusion;
  TensorView* column = input(fusion, F32, {-1, 1});
  TensorView* row = input(fusion, F32, {1, -1});
  TensorView* y = mul(column, row);
  EXPECT_TRUE(y->axis(0)->isIteration());
  EXPECT_TRUE(y->axis(1)->isIteration());
  EXPECT_EQ(y->axis(0)->extent(), column->axis(0)->extent());
  EXPECT_EQ(y->axis(1)->extent(), row->axis(1)->extent());

  TensorView* ones = input(fusion, F32, {1, 1});
  TensorView* b = add(ones, column);
  EXPECT_TRUE(b->axis(0)->isIteration());
  EXPECT_TRUE(b->axis(1)->isBroadcast());
  EXPECT_EQ(constantExtent(b, 1), 1);
  EXPECT_FALSE(b->axis(1)->hasExpandedExtent());
  EXPECT_TRUE(b->contiguity()[1] == std::nullopt);
}

TEST(ElementwiseTest, ConstantExtentsArePreferred) {
  Fusion fusion;
  TensorView* symbolic = input(fusion, F32, {-1});
  TensorView* fixed = input(fusion, F32, {5});
  EXPECT_EQ(constantExtent(add(symbolic, fixed), 0), 5);
  EXPECT_EQ(constantExtent(add(fixed, symbolic), 0), 5);
  // An Iteration dim of constant size 1 broadcasts: a symbolic extent wins over it.
  TensorView* one = tensorOf(fusion, {iteration(fusion, fusion.constantIndex(1))});
  TensorView* y = add(one, symbolic);
  EXPECT_TRUE(y->axis(0)->isIteration());
  EXPECT_EQ(y->axis(0)->extent(), symbolic->axis(0)->extent());
  EXPECT_EQ(constantExtent(add(one, fixed), 0), 5);
  EXPECT_EQ(constantExtent(add(one, one), 0), 1);
}

TEST(ElementwiseTest, ExpandedBroadcastsKeepTheirExpandedExtent) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, IDX);
  TensorView* expanded6 = tensorOf(fusion, {expandedBroadcast(fusion, fusion.constantIndex(6))});
  TensorView* expanded_n = tensorOf(fusion, {expandedBroadcast(fusion, n)});
  TensorView* plain = input(fusion, F32, {1});
  TensorView* symbolic = input(fusion, F32, {-1});

  TensorView* a = add(expanded6, plain);
  EXPECT_TRUE(a->axis(0)->isBroadcast());
  ASSERT_TRUE(a->axis(0)->hasExpandedExtent());
  EXPECT_EQ(a->axis(0)->expandedExtent()->constantInt(), 6);
  EXPECT_EQ(a->axis(0)->extent()->constantInt(), 1);
  EXPECT_NE(a->axis(0), expanded6->axis(0));

  TensorView* b = add(plain, expanded_n);
  ASSERT_TRUE(b->axis(0)->hasExpandedExtent());
  EXPECT_EQ(b->axis(0)->expandedExtent(), n);

  TensorView* c = add(expanded_n, expanded6);  // the constant one is preferred
  EXPECT_EQ(c->axis(0)->expandedExtent()->constantInt(), 6);

  TensorView* d = add(expanded6, symbolic);  // an Iteration dim wins
  EXPECT_TRUE(d->axis(0)->isIteration());
  EXPECT_FALSE(d->axis(0)->hasExpandedExtent());
  EXPECT_EQ(d->axis(0)->extent(), symbolic->axis(0)->extent());
}

TEST(ElementwiseTest, ReductionDimsOfOperandsAreNotPartOfTheShape) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, IDX);
  Scalar* k = makeInputScalar(fusion, IDX);
  TensorView* reduced =
      tensorOf(fusion, {iteration(fusion, n), fusion.create<IterDomain>(k, IterType::Reduction)});
  TensorView* vector = input(fusion, F32, {-1});
  TensorView* y = add(reduced, vector);
  ASSERT_EQ(y->nDims(), 1);
  EXPECT_FALSE(y->hasReduction());
  EXPECT_EQ(y->axis(0)->extent(), n);
  TensorView* e = exp(reduced);
  ASSERT_EQ(e->nDims(), 1);
  EXPECT_EQ(e->axis(0)->extent(), n);
}

TEST(ElementwiseTest, TernaryOpsBroadcastAllTensorOperands) {
  Fusion fusion;
  TensorView* mask = input(fusion, B, {-1, 1});
  TensorView* x = input(fusion, F32, {-1});
  TensorView* y = where(mask, x, 0.0);
  ASSERT_EQ(y->rank(), 2);
  EXPECT_EQ(extentOf(y, 0), extentOf(mask, 0));
  EXPECT_EQ(extentOf(y, 1), extentOf(x, 0));
  TensorView* lo = input(fusion, F32, {7, 1, 1});
  EXPECT_EQ(clamp(x, lo, 1.0)->rank(), 3);
  EXPECT_EQ(lerp(x, mask, 0.5)->rank(), 2);
  EXPECT_EQ(addcmul(x, x, lo)->rank(), 3);
}

// ---------------------------------------------------------------------------------------------
// Scalars: folding and simplification.

TEST(ElementwiseTest, ConstantScalarsFoldWithoutAnExpr) {
  Fusion fusion;
  Scalar* three = fusion.constantIndex(3);
  Scalar* four = fusion.constantIndex(4);
  int64_t before = fusion.numStatements();
  Val* seven = add(three, four);
  EXPECT_EQ(fusion.numStatements(), before + 1);  // only the result constant
  ASSERT_TRUE(seven->isA<Scalar>());
  EXPECT_EQ(seven->definition(), nullptr);
  EXPECT_EQ(seven->dtype(), IDX);
  EXPECT_EQ(seven->as<Scalar>()->constantInt(), 7);

  before = fusion.numStatements();
  Val* twelve = mul(three, 4);  // a C++ constant is never materialized when folding
  EXPECT_EQ(fusion.numStatements(), before + 1);
  EXPECT_EQ(twelve->as<Scalar>()->constantInt(), 12);
  EXPECT_EQ(twelve->dtype(), IDX);
}

TEST(ElementwiseTest, FoldingUsesTheElementwiseSemantics) {
  Fusion fusion;
  auto value = [](Val* v) {
    EXPECT_TRUE(v->isA<Scalar>());
    EXPECT_EQ(v->definition(), nullptr);
    return *v->as<Scalar>()->value();
  };
  Scalar* big = fusion.constant(int64_t{2147483647}, I32);
  EXPECT_EQ(std::get<int64_t>(value(add(big, 1))), -2147483648);  // int32 wraps
  EXPECT_EQ(add(big, 1)->dtype(), I32);
  EXPECT_EQ(std::get<int64_t>(value(div(fusion.constantIndex(-7), 2))), -3);
  EXPECT_EQ(std::get<int64_t>(value(remainder(fusion.constantIndex(-7), 3))), 2);
  EXPECT_EQ(std::get<int64_t>(value(ceil_div(fusion.constantIndex(10), 4))), 3);
  EXPECT_EQ(std::get<double>(value(mul(fusion.constant(2.5, F64), 2))), 5.0);
  Val* third = cast(fusion.constant(1.0 / 3.0, F64), F16);
  EXPECT_EQ(third->dtype(), F16);
  EXPECT_EQ(std::get<double>(value(third)), 0.333251953125);  // float16 0x3555
  Val* half = truediv(fusion.constantIndex(7), 2);
  EXPECT_EQ(half->dtype(), F32);
  EXPECT_EQ(std::get<double>(value(half)), 3.5);
  EXPECT_EQ(std::get<int64_t>(value(neg(fusion.constantIndex(5)))), -5);
  EXPECT_NEAR(std::get<double>(value(gelu(fusion.constant(1.0, F64), GeluApproximation::Tanh))),
              0.8411919906082768, 1e-15);
  EXPECT_NEAR(std::get<double>(value(gelu(fusion.constant(1.0, F64)))), 0.8413447460685429, 1e-15);
  Val* picked = where(fusion.constant(true, B), 1.0, 2.0);
  EXPECT_EQ(picked->dtype(), F32);
  EXPECT_EQ(std::get<double>(value(picked)), 1.0);
  EXPECT_TRUE(std::get<bool>(value(eq(fusion.constantIndex(3), 3))));
  EXPECT_TRUE(std::isnan(std::get<double>(value(maximum(fusion.constant(NAN, F64), 1.0)))));
  EXPECT_EQ(std::get<double>(value(clamp(fusion.constant(9.0, F64), 0, 6))), 6.0);
  EXPECT_EQ(std::get<double>(value(lerp(fusion.constant(1.0, F64), 3.0, 0.5))), 2.0);
  EXPECT_EQ(std::get<double>(value(addcmul(fusion.constant(1.0, F64), 2.0, 3.0, 0.5))), 4.0);
}

TEST(ElementwiseTest, SymbolicScalarsBuildScalarExprs) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, IDX);
  Val* next = add(n, 1);
  ASSERT_TRUE(next->isA<Scalar>());
  EXPECT_FALSE(next->as<Scalar>()->isConstant());
  EXPECT_EQ(next->dtype(), IDX);
  Expr* expr = next->definition();
  ASSERT_NE(expr, nullptr);
  EXPECT_EQ(expr->op(), OpKind::Add);
  EXPECT_EQ(expr->input(0), n);
  EXPECT_EQ(expr->input(1)->as<Scalar>()->constantInt(), 1);

  Scalar* f = makeInputScalar(fusion, F32);
  Val* scaled = mul(f, 2.0);
  EXPECT_TRUE(scaled->isA<Scalar>());
  EXPECT_EQ(scaled->dtype(), F32);
  EXPECT_EQ(exp(f)->dtype(), F32);
  EXPECT_EQ(sqrt(n)->dtype(), F32);
  EXPECT_EQ(where(makeInputScalar(fusion, B), n, 0)->dtype(), IDX);
}

TEST(ElementwiseTest, IntegerScalarIdentitiesNeedNoExpr) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, IDX);
  const int64_t before = fusion.numStatements();
  EXPECT_EQ(add(n, 0), n);
  EXPECT_EQ(add(0, n), n);
  EXPECT_EQ(sub(n, 0), n);
  EXPECT_EQ(mul(n, 1), n);
  EXPECT_EQ(mul(1, n), n);
  EXPECT_EQ(div(n, 1), n);
  EXPECT_EQ(ceil_div(n, 1), n);
  EXPECT_EQ(add(n, false), n);
  EXPECT_EQ(fusion.numStatements(), before);
  EXPECT_EQ(add(n, fusion.constantIndex(0)), n);
  EXPECT_EQ(mul(fusion.constantIndex(1), n), n);

  Val* zero = mul(n, 0);
  ASSERT_TRUE(zero->isA<Scalar>());
  EXPECT_EQ(zero->as<Scalar>()->constantInt(), 0);
  EXPECT_EQ(zero->dtype(), IDX);
  EXPECT_EQ(zero->definition(), nullptr);
  EXPECT_EQ(mul(0, n)->as<Scalar>()->constantInt(), 0);

  Scalar* i = makeInputScalar(fusion, I32);
  EXPECT_EQ(add(i, 0), i);
  EXPECT_EQ(mul(i, 1), i);
}

TEST(ElementwiseTest, OtherArithmeticIsNotSimplifiedAway) {
  Fusion fusion;
  Scalar* n = makeInputScalar(fusion, IDX);
  Scalar* i = makeInputScalar(fusion, I32);
  Scalar* f = makeInputScalar(fusion, F32);
  TensorView* x = input(fusion, I64, {-1});
  auto hasExpr = [](Val* v, OpKind op) {
    return v->definition() != nullptr && v->definition()->op() == op;
  };
  EXPECT_TRUE(hasExpr(sub(0, n), OpKind::Sub));
  EXPECT_TRUE(hasExpr(div(1, n), OpKind::Div));
  EXPECT_TRUE(hasExpr(div(n, 2), OpKind::Div));
  EXPECT_TRUE(hasExpr(pow(n, 1), OpKind::Pow));
  // Floats: x + 0.0 is not x for x = -0.0, and x * 0 is not 0 for nan.
  EXPECT_TRUE(hasExpr(add(f, 0.0), OpKind::Add));
  EXPECT_TRUE(hasExpr(mul(f, 0), OpKind::Mul));
  EXPECT_TRUE(hasExpr(mul(f, 1), OpKind::Mul));
  // The result would change dtype: int32 + an int64 scalar Val is int64.
  Val* widened = add(i, fusion.constant(int64_t{0}, I64));
  EXPECT_TRUE(hasExpr(widened, OpKind::Add));
  EXPECT_EQ(widened->dtype(), I64);
  // Tensor ops are never simplified away.
  EXPECT_TRUE(hasExpr(add(x, 0), OpKind::Add));
  EXPECT_TRUE(hasExpr(mul(x, 1), OpKind::Mul));
  EXPECT_TRUE(hasExpr(mul(x, 0), OpKind::Mul));
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(ElementwiseTest, MismatchedConstantSizesAreRefused) {
  Fusion fusion;
  TensorView* three = input(fusion, F32, {3});
  TensorView* four = input(fusion, F32, {4});
  EXPECT_TRUE(throwsError([&] { add(three, four); },
                          {"add: cannot broadcast a = T0 (input 0) with b = T1 (input 1)",
                           "dim 0 of T0 has size 3 but dim 0 of T1 has size 4 (output dim 0)",
                           "sizes must be equal or one of them must be 1"}));
  TensorView* matrix = input(fusion, F32, {2, 3});
  EXPECT_TRUE(
      throwsError([&] { mul(four, matrix); }, {"mul: cannot broadcast", "dim 0 of T1 has size 4",
                                               "dim 1 of T2 has size 3 (output dim 1)"}));
  TensorView* mask = input(fusion, B, {5});
  EXPECT_TRUE(throwsError([&] { where(mask, three, 0.0); },
                          {"where: cannot broadcast cond = T3 (input 3) with a = T0 (input 0)"}));
  TensorView* expanded = tensorOf(fusion, {expandedBroadcast(fusion, fusion.constantIndex(6))});
  EXPECT_TRUE(throwsError([&] { add(expanded, three); },
                          {"add: cannot broadcast", "has size 6", "has size 3"}));
}

TEST(ElementwiseTest, BitwiseOpsNeedIntegralOrBoolOperands) {
  Fusion fusion;
  TensorView* f = input(fusion, F32, {-1});
  TensorView* i = input(fusion, I32, {-1});
  EXPECT_TRUE(throwsError(
      [&] { bitwise_and(f, i); },
      {"bitwise_and: a (T0 (input 0)) has dtype float32", "needs integral or bool operands"}));
  EXPECT_TRUE(throwsError([&] { bitwise_or(i, 1.5); },
                          {"bitwise_or: b (the constant 1.5) has dtype float64"}));
  EXPECT_TRUE(throwsError([&] { bitwise_xor(i, f); }, {"bitwise_xor: b (T0 (input 0))"}));
  EXPECT_TRUE(throwsError([&] { left_shift(f, 1); }, {"left_shift: a", "float32"}));
  EXPECT_TRUE(throwsError([&] { right_shift(i, f); }, {"right_shift: b", "float32"}));
  EXPECT_TRUE(
      throwsError([&] { bitwise_not(f); }, {"bitwise_not: x (T0 (input 0)) has dtype float32"}));
  Scalar* s = makeInputScalar(fusion, F64);
  EXPECT_TRUE(throwsError([&] { bitwise_and(s, 1); },
                          {"bitwise_and: a (" + s->name() + ") has dtype float64"}));
}

TEST(ElementwiseTest, CeilDivNeedsIntegralOperands) {
  Fusion fusion;
  Scalar* f = makeInputScalar(fusion, F32);
  Scalar* n = makeInputScalar(fusion, IDX);
  TensorView* mask = input(fusion, B, {-1});
  EXPECT_TRUE(throwsError(
      [&] { ceil_div(f, 2); },
      {"ceil_div: a (" + f->name() + ") has dtype float32", "needs integral operands"}));
  EXPECT_TRUE(
      throwsError([&] { ceil_div(n, 2.0); }, {"ceil_div: b (the constant 2.0) has dtype float64"}));
  EXPECT_TRUE(throwsError([&] { ceil_div(mask, 2); }, {"ceil_div: a (T0 (input 2))", "bool"}));
}

TEST(ElementwiseTest, WhereNeedsABoolCondition) {
  Fusion fusion;
  TensorView* x = input(fusion, F32, {-1});
  EXPECT_TRUE(
      throwsError([&] { where(x, 1.0, 0.0); },
                  {"where: cond (T0 (input 0)) has dtype float32", "must be bool", "ne(cond, 0)"}));
  Scalar* n = makeInputScalar(fusion, I64);
  EXPECT_TRUE(
      throwsError([&] { where(n, x, 0.0); }, {"where: cond (" + n->name() + ") has dtype int64"}));
}

TEST(ElementwiseTest, BoolNegationAndSubtractionAreRefused) {
  Fusion fusion;
  TensorView* mask = input(fusion, B, {-1});
  TensorView* x = input(fusion, F32, {-1});
  EXPECT_TRUE(
      throwsError([&] { neg(mask); }, {"neg: x (T0 (input 0)) is bool", "use logical_not"}));
  EXPECT_TRUE(
      throwsError([&] { sub(mask, mask); }, {"sub: a (T0 (input 0)) is bool", "logical_xor"}));
  EXPECT_TRUE(throwsError([&] { sub(x, true); }, {"sub: b (the constant true) is bool"}));
}

TEST(ElementwiseTest, LerpNeedsAFloatingResult) {
  Fusion fusion;
  TensorView* i = input(fusion, I32, {-1});
  EXPECT_TRUE(throwsError([&] { lerp(i, i, 1); },
                          {"lerp: start (T0 (input 0)), end (T0 (input 0)) and weight (the "
                           "constant 1) promote to int32",
                           "needs a floating result"}));
}

TEST(ElementwiseTest, AllConstantOperandsHaveNoFusion) {
  EXPECT_TRUE(throwsError([] { add(1, 2); }, {"add: every operand is a constant"}));
  EXPECT_TRUE(throwsError([] { mul(Operand(1.5), Operand(2)); }, {"mul: every operand"}));
  EXPECT_TRUE(throwsError([] { neg(1.5); },
                          {"neg: every operand is a constant", "fusion.constant(value, dtype)"}));
  EXPECT_TRUE(throwsError([] { cast(1.0, DataType::Float16); }, {"cast: every operand"}));
  EXPECT_TRUE(throwsError([] { where(true, 1, 2); }, {"where: every operand"}));
  EXPECT_TRUE(throwsError([] { clamp(1.0, 0, 2); }, {"clamp: every operand"}));
  EXPECT_TRUE(throwsError([] { lerp(1.0, 2.0, 0.5); }, {"lerp: every operand"}));
  EXPECT_TRUE(throwsError([] { addcmul(1.0, 2.0, 3.0); }, {"addcmul: every operand"}));
  EXPECT_TRUE(throwsError([] { gelu(1.0); }, {"gelu: every operand"}));
}

TEST(ElementwiseTest, OperandsFromAnotherFusionAreRefused) {
  Fusion fusion;
  Fusion other;
  TensorView* x = input(fusion, F32, {-1});
  TensorView* y = input(other, F32, {-1});
  Scalar* s = makeInputScalar(other, F32);
  EXPECT_TRUE(
      throwsError([&] { add(x, y); }, {"add: operands T0 and T0 belong to different fusions"}));
  EXPECT_TRUE(throwsError([&] { mul(x, s); },
                          {"mul: operands T0 and " + s->name() + " belong to different"}));
  EXPECT_TRUE(throwsError([&] { where(input(fusion, B, {-1}), x, y); },
                          {"where: operands", "different fusions"}));
}

TEST(ElementwiseTest, NullTensorsAndIterDomainsAreRefused) {
  Fusion fusion;
  TensorView* x = input(fusion, F32, {-1});
  TensorView* null = nullptr;
  EXPECT_TRUE(throwsError([&] { exp(null); }, {"exp: x is a null TensorView"}));
  EXPECT_TRUE(throwsError([&] { add(x, null); }, {"add: b is a null TensorView"}));
  EXPECT_TRUE(throwsError([&] { where(null, 1.0, 0.0); }, {"where: cond is a null TensorView"}));
  EXPECT_TRUE(
      throwsError([&] { mul(x, x->axis(0)); }, {"mul: b is the IterDomain", "pass its extent()"}));
}

TEST(ElementwiseTest, FoldingAnIntegerDivisionByZeroNamesTheOp) {
  Fusion fusion;
  EXPECT_TRUE(
      throwsError([&] { div(fusion.constantIndex(4), 0); }, {"div: integer division by zero"}));
  EXPECT_TRUE(throwsError([&] { ceil_div(fusion.constantIndex(4), fusion.constantIndex(0)); },
                          {"ceil_div: integer division by zero"}));
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

TEST(ElementwiseTest, SignbitGivesBoolAndRefusesBool) {
  Fusion fusion;
  for (DataType dtype : {I32, I64, F16, BF16, F32, F64}) {
    EXPECT_EQ(signbit(input(fusion, dtype, {-1}))->dtype(), B) << dtype;
  }
  EXPECT_EQ(signbit(makeInputScalar(fusion, IDX))->dtype(), B);
  TensorView* mask = input(fusion, B, {-1});
  EXPECT_TRUE(throwsError([&] { signbit(mask); }, {"signbit: x (" + mask->name() + " (input",
                                                   ") is bool", "torch.signbit refuses bool too"}));
  // Constants fold: the sign bit of -0.0 is set.
  EXPECT_TRUE(
      identical(*signbit(fusion.constant(-0.0, F64))->as<Scalar>()->value(), ScalarValue(true)));
}

TEST(ElementwiseTest, GcdNeedsIntegralOperands) {
  Fusion fusion;
  TensorView* f = input(fusion, F32, {-1});
  TensorView* i = input(fusion, I64, {-1});
  TensorView* mask = input(fusion, B, {-1});
  EXPECT_TRUE(
      throwsError([&] { gcd(f, i); }, {"gcd: a (" + f->name() + " (input 0)) has dtype float32",
                                       "gcd needs integral operands (int32, int64 or index)"}));
  EXPECT_TRUE(throwsError([&] { gcd(i, 2.0); }, {"gcd: b (the constant 2", "float64"}));
  EXPECT_TRUE(throwsError([&] { gcd(i, mask); }, {"gcd: b (", "has dtype bool"}));
  // Constants fold with the evaluator's semantics.
  EXPECT_EQ(gcd(fusion.constant(int64_t{-12}, I64), 18)->as<Scalar>()->constantInt(), 6);
}

TEST(ElementwiseTest, NextafterRefusesReducedPrecisionAndIntegers) {
  Fusion fusion;
  TensorView* h = input(fusion, F16, {-1});
  TensorView* bh = input(fusion, BF16, {-1});
  TensorView* i = input(fusion, I32, {-1});
  EXPECT_TRUE(throwsError(
      [&] { nextafter(h, 1.0); },
      {"nextafter: a (" + h->name() + " (input 0)) has dtype float16", "promote to float16",
       "only float32 and float64", "cast both operands to float32 or float64"}));
  EXPECT_TRUE(throwsError([&] { nextafter(1.0, bh); },
                          {"nextafter: b (" + bh->name() + " (input 1)) has dtype bfloat16"}));
  EXPECT_TRUE(throwsError([&] { nextafter(i, i); }, {"nextafter: a (", "int32", "promote to int32",
                                                     "needs a float32 or float64 result"}));
  EXPECT_TRUE(throwsError([&] { nextafter(i, true); }, {"nextafter: a (", "promote to int32"}));
}

TEST(ElementwiseTest, LogicalRightShiftNeedsIntegralOperands) {
  Fusion fusion;
  TensorView* f = input(fusion, F64, {-1});
  TensorView* i = input(fusion, I32, {-1});
  TensorView* mask = input(fusion, B, {-1});
  EXPECT_TRUE(throwsError([&] { logical_right_shift(f, 1); },
                          {"logical_right_shift: a (" + f->name() + " (input 0)) has dtype float64",
                           "needs integral operands"}));
  EXPECT_TRUE(throwsError([&] { logical_right_shift(i, 1.0); },
                          {"logical_right_shift: b (the constant 1", "float64"}));
  EXPECT_TRUE(throwsError([&] { logical_right_shift(mask, 1); },
                          {"logical_right_shift: a (", "has dtype bool"}));
  // A folded constant shifts the int64 bits: -1 >>> 60 = 15.
  Scalar* minus_one = fusion.constant(int64_t{-1}, I64);
  EXPECT_EQ(logical_right_shift(minus_one, 60)->as<Scalar>()->constantInt(), 15);
}

}  // namespace
}  // namespace braze
