// set: the user's copy op. It is the OpKind::Set that scheduling's cache ops make, with a fresh
// domain of the input's user-visible shape and the input's dtype. segment_set and stride_order
// are copies of their own kinds; stride_order also lays its output out in memory.

#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/dtype_shorthands.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using namespace test::dtypes;
using test::throwsError;

TEST(SetTest, CopiesShapeAndDtype) {
  for (DataType dtype : {B, I32, I64, F16, BF16, F32, F64}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = dtype, .sizes = {-1, 1, 4}});
    TensorView* y = set(x);
    ASSERT_NE(y->definition(), nullptr);
    EXPECT_EQ(y->definition()->op(), OpKind::Set);
    EXPECT_EQ(y->definition()->inputs(), std::vector<Val*>{x});
    EXPECT_TRUE(y->definition()->attributes().empty());
    EXPECT_EQ(y->dtype(), dtype);
    ASSERT_EQ(y->rank(), 3);
    for (int64_t d = 0; d < 3; ++d) {
      EXPECT_NE(y->axis(d), x->axis(d)) << "the copy owns its IterDomains";
      EXPECT_EQ(y->axis(d)->extent(), x->axis(d)->extent());
      EXPECT_EQ(y->axis(d)->iterType(), x->axis(d)->iterType());
    }
  }
}

TEST(SetTest, DropsReducedDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, -1}});
  TensorView* y = set(sum(x, {1}));
  EXPECT_EQ(y->rank(), 1);
  EXPECT_FALSE(y->hasReduction());
}

TEST(SetTest, PrintsAsSet) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1}});
  fusion.addOutput(set(x));
  EXPECT_NE(printMath(fusion).find("set("), std::string::npos) << printMath(fusion);
}

TEST(SetTest, RefusesANullTensor) {
  EXPECT_TRUE(throwsError([] { set(nullptr); }, {"set: x is a null TensorView"}));
}

TEST(SegmentSetTest, IsACopyOfItsOwnKind) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = BF16, .sizes = {-1, 1}});
  TensorView* y = segment_set(x);
  ASSERT_NE(y->definition(), nullptr);
  EXPECT_EQ(y->definition()->op(), OpKind::SegmentSet);
  EXPECT_EQ(y->definition()->inputs(), std::vector<Val*>{x});
  EXPECT_EQ(y->dtype(), BF16);
  EXPECT_EQ(y->axis(0)->extent(), x->axis(0)->extent());
  EXPECT_TRUE(y->axis(1)->isBroadcast());
  fusion.addOutput(y);
  EXPECT_NE(printMath(fusion).find("segment_set("), std::string::npos) << printMath(fusion);
  EXPECT_TRUE(throwsError([] { segment_set(nullptr); }, {"segment_set: x is a null TensorView"}));
}

TEST(StrideOrderTest, LaysTheOutputOutInTheGivenOrder) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, 1, -1}});
  // Dim 0 innermost, then dim 2, then dim 1 (a broadcast) outermost.
  TensorView* y = stride_order(x, {0, 2, 1});
  ASSERT_NE(y->definition(), nullptr);
  EXPECT_EQ(y->definition()->op(), OpKind::StrideOrder);
  EXPECT_EQ(y->definition()->attribute<std::vector<int64_t>>("stride_order"),
            (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(y->allocationOrder(), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(y->contiguity(), (std::vector<std::optional<bool>>{true, std::nullopt, true}));
  EXPECT_EQ(x->allocationOrder(), (std::vector<int64_t>{0, 1, 2})) << "x keeps its layout";
  EXPECT_EQ(stride_order(x, {2, 1, 0})->allocationOrder(), (std::vector<int64_t>{0, 1, 2}));
}

TEST(StrideOrderTest, Errors) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, -1}});
  EXPECT_TRUE(throwsError([&] { stride_order(x, {0}); },
                          {"stride_order of T0 (input 0)", "[0] has 1 entries", "rank 2"}));
  EXPECT_TRUE(throwsError(
      [&] {
        stride_order(x, {1, 1});
      },
      {"[1, 1] is not a permutation of 0..1", "entry 1 is 1", "0 for the innermost"}));
  EXPECT_TRUE(throwsError([&] { stride_order(x, {0, 2}); }, {"entry 1 is 2"}));
  EXPECT_TRUE(throwsError([&] { stride_order(nullptr, {}); }, {"stride_order: x is a null"}));
}

}  // namespace
}  // namespace braze
