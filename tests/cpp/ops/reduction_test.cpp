// sum, prod, max, min, amax, amin and mean: result dtypes, the Reduction IterDomains they
// leave, keepdim's broadcast, the casts around reduced-precision accumulation, and every error.

#include "braze/ops/reduction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::scalarText;
using test::throwsError;

using Axes = std::vector<int64_t>;

const Axes& axesOf(const Expr* expr) {
  return expr->attribute<std::vector<int64_t>>("axes");
}

TEST(ReductionTest, SumKeepsReducedDimsAsReductions) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 4, -1}});
  TensorView* y = sum(x, {-1, 0});
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[r:s0, 4, r:s1]");
  EXPECT_EQ(y->rank(), 1);
  EXPECT_EQ(y->nDims(), 3);
  const Expr* def = definitionOf(y, OpKind::Sum);
  EXPECT_EQ(axesOf(def), (Axes{0, 2}));
  EXPECT_EQ(def->input(0), x);
  // Extents are shared with the input, IterDomains are not.
  EXPECT_EQ(y->axis(0)->extent(), x->axis(0)->extent());
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(ReductionTest, EmptyAxesReduceEveryDim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = sum(x, {});
  EXPECT_EQ(domainText(y), "[r:s0, r:s1, r:s2]");
  EXPECT_EQ(y->rank(), 0);
  EXPECT_EQ(axesOf(definitionOf(y, OpKind::Sum)), (Axes{0, 1, 2}));
}

TEST(ReductionTest, ReducingAReductionOutputIndexesItsVisibleDims) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* partial = sum(x, {1});  // visible dims: s0, s2
  TensorView* y = max(partial, {1});
  EXPECT_EQ(domainText(y), "[s0, r:s2]");
  EXPECT_EQ(axesOf(definitionOf(y, OpKind::Max)), (Axes{1}));
}

TEST(ReductionTest, ZeroDimInputReducesNothing) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {}});
  for (const Axes& axes : {Axes{}, Axes{0}, Axes{-1}}) {
    TensorView* y = sum(x, axes, /*keepdim=*/true);
    EXPECT_EQ(domainText(y), "[]");
    EXPECT_EQ(axesOf(definitionOf(y, OpKind::Sum)), Axes{});
  }
}

TEST(ReductionTest, ReducingABroadcastOrExpandedDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 3}});
  TensorView* y = sum(x, {0});
  EXPECT_EQ(domainText(y), "[r:1, 3]");
  // An expanded broadcast is reduced over its expanded extent.
  TensorView* wide = expand(x, {int64_t{5}, int64_t{-1}});
  EXPECT_EQ(domainText(wide), "[b ex 5, 3]");
  EXPECT_EQ(domainText(sum(wide, {0})), "[r:5, 3]");
}

TEST(ReductionTest, KeepdimBroadcastsTheReducedDimsBack) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* y = sum(x, {0, 2}, /*keepdim=*/true);
  EXPECT_EQ(domainText(y), "[b, s1, b]");
  const Expr* bcast = definitionOf(y, OpKind::Broadcast);
  EXPECT_EQ(bcast->attribute<std::vector<bool>>("flags"), (std::vector<bool>{true, false, true}));
  const auto* reduced = bcast->input(0)->as<TensorView>();
  EXPECT_EQ(domainText(reduced), "[r:s0, s1, r:s2]");
  definitionOf(reduced, OpKind::Sum);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(ReductionTest, SumAndProdOfIntegersAndBoolsGiveInt64) {
  Fusion fusion;
  for (DataType dtype : {DataType::Bool, DataType::Int32, DataType::Int64}) {
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    for (TensorView* y : {sum(x, {1}), prod(x, {1})}) {
      EXPECT_EQ(y->dtype(), DataType::Int64) << dtype;
      // The reduction itself reads and writes int64: the input is cast first.
      const Expr* def = y->definition();
      ASSERT_TRUE(def->op() == OpKind::Sum || def->op() == OpKind::Prod);
      const auto* input = def->input(0)->as<TensorView>();
      EXPECT_EQ(input->dtype(), DataType::Int64);
      if (dtype != DataType::Int64) {
        EXPECT_EQ(definitionOf(input, OpKind::Cast)->input(0), x);
      } else {
        EXPECT_EQ(input, x);
      }
    }
  }
}

TEST(ReductionTest, ReducedPrecisionAccumulatesInFloat32) {
  for (DataType dtype : {DataType::Float16, DataType::BFloat16}) {
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    for (TensorView* y : {sum(x, {0}), prod(x, {0})}) {
      EXPECT_EQ(y->dtype(), dtype);
      const Expr* back = definitionOf(y, OpKind::Cast);
      const auto* reduced = back->input(0)->as<TensorView>();
      EXPECT_EQ(reduced->dtype(), DataType::Float32);
      EXPECT_EQ(domainText(reduced), "[r:s0, s1]");
      const auto* upcast = reduced->definition()->input(0)->as<TensorView>();
      EXPECT_EQ(upcast->dtype(), DataType::Float32);
      EXPECT_EQ(definitionOf(upcast, OpKind::Cast)->input(0), x);
      // The cast back has the reduced dims as Reduction IterDomains no longer.
      EXPECT_EQ(domainText(y), "[s1]");
    }
  }
}

TEST(ReductionTest, ExplicitDtypeCastsBeforeReducing) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* wide = sum(x, {0}, false, DataType::Float64);
  EXPECT_EQ(wide->dtype(), DataType::Float64);
  definitionOf(wide, OpKind::Sum);
  EXPECT_EQ(definitionOf(wide->definition()->input(0)->as<TensorView>(), OpKind::Cast)->input(0),
            x);

  TensorView* i = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* same = sum(i, {0}, false, DataType::Int32);
  EXPECT_EQ(same->dtype(), DataType::Int32);
  EXPECT_EQ(definitionOf(same, OpKind::Sum)->input(0), i);

  TensorView* f = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* narrow = prod(f, {0}, false, DataType::BFloat16);
  EXPECT_EQ(narrow->dtype(), DataType::BFloat16);
  const Expr* back = definitionOf(narrow, OpKind::Cast);
  EXPECT_EQ(back->input(0)->dtype(), DataType::Float32);
  EXPECT_EQ(definitionOf(back->input(0)->as<TensorView>(), OpKind::Prod)->input(0), f);
}

TEST(ReductionTest, MaxAndMinKeepTheDtypeWithoutCasts) {
  Fusion fusion;
  for (DataType dtype : {DataType::Bool, DataType::Int32, DataType::Float16, DataType::Float32}) {
    TensorView* x = makeSymbolicTensor(fusion, 2, dtype);
    const std::pair<TensorView*, OpKind> cases[] = {{max(x, {1}), OpKind::Max},
                                                    {amax(x, {1}), OpKind::Max},
                                                    {min(x, {1}), OpKind::Min},
                                                    {amin(x, {1}), OpKind::Min}};
    for (const auto& [y, op] : cases) {
      EXPECT_EQ(y->dtype(), dtype);
      EXPECT_EQ(definitionOf(y, op)->input(0), x);
      EXPECT_EQ(axesOf(y->definition()), (Axes{1}));
    }
  }
}

TEST(ReductionTest, MaxWithKeepdim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {2, 3}});
  TensorView* y = amax(x, {-1}, /*keepdim=*/true);
  EXPECT_EQ(domainText(y), "[2, b]");
  EXPECT_EQ(domainText(definitionOf(y, OpKind::Broadcast)->input(0)->as<TensorView>()), "[2, r:3]");
}

TEST(ReductionTest, MeanDividesTheSumByTheCount) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 4, 6}});
  TensorView* y = mean(x, {1, 2});
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[s0]");
  const Expr* division = y->definition();
  ASSERT_NE(division, nullptr);
  EXPECT_TRUE(division->op() == OpKind::Div || division->op() == OpKind::TrueDiv);
  const auto* total = division->input(0)->as<TensorView>();
  EXPECT_EQ(domainText(total), "[s0, r:4, r:6]");
  EXPECT_EQ(axesOf(definitionOf(total, OpKind::Sum)), (Axes{1, 2}));
  const auto* count = division->input(1)->as<Scalar>();
  EXPECT_EQ(count->dtype(), DataType::Index);
  EXPECT_EQ(count->constantInt(), 24);
}

TEST(ReductionTest, MeanOfSymbolicDimsCountsWithAnIndexExpression) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {-1, 3, -1}});
  TensorView* y = mean(x, {});
  const auto* count = y->definition()->input(1)->as<Scalar>();
  EXPECT_EQ(count->dtype(), DataType::Index);
  EXPECT_EQ(scalarText(count), "mul(mul(s0, s1), 3)");
}

TEST(ReductionTest, MeanOfReducedPrecisionAndKeepdim) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* y = mean(x, {1}, /*keepdim=*/true);
  EXPECT_EQ(y->dtype(), DataType::BFloat16);
  EXPECT_EQ(domainText(y), "[s0, b]");
  const auto* narrowed = definitionOf(y, OpKind::Broadcast)->input(0)->as<TensorView>();
  EXPECT_EQ(narrowed->dtype(), DataType::BFloat16);
  const auto* quotient = definitionOf(narrowed, OpKind::Cast)->input(0)->as<TensorView>();
  EXPECT_EQ(quotient->dtype(), DataType::Float32);
  const auto* total = quotient->definition()->input(0)->as<TensorView>();
  EXPECT_EQ(total->dtype(), DataType::Float32);
  definitionOf(total, OpKind::Sum);
}

TEST(ReductionTest, MeanOfIntegersWithAFloatingDtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* y = mean(x, {0}, false, DataType::Float64);
  EXPECT_EQ(y->dtype(), DataType::Float64);
  EXPECT_EQ(domainText(y), "[]");
}

TEST(ReductionTest, ErrorAxisOutOfRange) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  EXPECT_TRUE(throwsError([&] { sum(x, {2}); }, {"sum", "dim 2", "T0 (input 0)", "rank 2"}));
  EXPECT_TRUE(throwsError([&] { max(x, {-3}); }, {"max", "dim -3", "-2 .. 1"}));
  TensorView* scalar = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  EXPECT_TRUE(throwsError([&] { mean(scalar, {1}); }, {"mean", "axis 1", "0-d", "-1 and 0"}));
}

TEST(ReductionTest, ErrorDuplicateAxes) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  EXPECT_TRUE(throwsError(
      [&] {
        prod(x, {1, -2});
      },
      {"prod", "axis -2", "dim 1", "more than once"}));
  EXPECT_TRUE(throwsError([&] { amin(x, {0, 0}); }, {"amin", "axis 0", "more than once"}));
}

TEST(ReductionTest, ErrorBoolResultDtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int32);
  EXPECT_TRUE(throwsError([&] { sum(x, {0}, false, DataType::Bool); },
                          {"sum", "dtype=bool", "default for int32 is int64"}));
  EXPECT_TRUE(throwsError([&] { prod(x, {0}, false, DataType::Bool); }, {"prod", "dtype=bool"}));
}

TEST(ReductionTest, ErrorMeanOfIntegers) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Int64);
  EXPECT_TRUE(throwsError([&] { mean(x, {0}); }, {"mean of T0 (input 0)", "int64", "pass dtype="}));
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Bool);
  EXPECT_TRUE(throwsError([&] { mean(b, {0}); }, {"mean", "bool"}));
}

TEST(ReductionTest, ErrorMeanWithNonFloatingDtype) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1, DataType::Float32);
  EXPECT_TRUE(throwsError([&] { mean(x, {0}, false, DataType::Int32); },
                          {"mean", "dtype=int32", "not a floating dtype"}));
}

TEST(ReductionTest, ErrorNullInput) {
  EXPECT_TRUE(throwsError([&] { sum(nullptr, {0}); }, {"sum", "null"}));
  EXPECT_TRUE(throwsError([&] { mean(nullptr, {0}); }, {"mean", "null"}));
  EXPECT_TRUE(throwsError([&] { max(nullptr, {0}); }, {"max", "null"}));
}

}  // namespace
}  // namespace braze
