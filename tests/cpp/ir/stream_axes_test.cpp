// Stream axes on a definition: what takeStreamAxes records from ParallelType::Stream (a logical
// axis, the outer axis of a split by a count or by a length), how the attribute travels through
// clone, the printer and the canonical form, the slice arithmetic, and every refusal.

#include "braze/ir/stream_axes.h"

#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::throwsError;

struct Pointwise {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* y = exp(x);
  TensorView* z = mul(y, 2.0);
  Pointwise() { fusion->addOutput(z); }
};

TEST(StreamAxesTest, ALogicalAxisIsSlicedOneIndexAtATime) {
  Pointwise p;
  const size_t unannotated = structuralHash(*p.fusion);
  p.z->parallelize(0, ParallelType::Stream);
  const std::vector<TensorView*> streamed = takeStreamAxes(*p.fusion);
  ASSERT_EQ(streamed, std::vector<TensorView*>{p.z});
  ASSERT_TRUE(p.z->streamAxis().has_value());
  EXPECT_EQ(*p.z->streamAxis(), (StreamAxis{0, false, 1}));
  EXPECT_FALSE(p.y->streamAxis().has_value());
  // Unscheduled again: the loop domain is the logical one, nothing parallelized.
  EXPECT_EQ(p.z->loop(), p.z->logical());
  EXPECT_EQ(p.z->axis(0)->parallelType(), ParallelType::Serial);
  EXPECT_NE(printMath(*p.fusion).find("stream(axis 0 per index)"), std::string::npos)
      << printMath(*p.fusion);
  EXPECT_NE(structuralHash(*p.fusion), unannotated);
  // A clone keeps it, and so does its canonical form.
  std::unique_ptr<Fusion> copy = p.fusion->clone();
  EXPECT_TRUE(structurallyEqual(*copy, *p.fusion));
  EXPECT_EQ(copy->outputs()[0]->as<TensorView>()->streamAxis(), p.z->streamAxis());
}

TEST(StreamAxesTest, TheOuterAxisOfASplitGivesASliceCountOrALength) {
  Pointwise p;
  p.y->split(0, 4, /*inner_split=*/false);
  p.y->parallelize(0, ParallelType::Stream);
  p.z->split(1, 256);
  p.z->parallelize(1, ParallelType::Stream);
  EXPECT_EQ(takeStreamAxes(*p.fusion).size(), 2u);
  EXPECT_EQ(*p.y->streamAxis(), (StreamAxis{0, true, 4}));
  EXPECT_EQ(*p.z->streamAxis(), (StreamAxis{1, false, 256}));
  EXPECT_EQ(p.y->loop(), p.y->logical());
  EXPECT_EQ(p.z->streamAxis()->toString(), "axis 1 in slices of 256");
  EXPECT_EQ(p.y->streamAxis()->toString(), "axis 0 in 4 slices");
}

TEST(StreamAxesTest, SlicesCoverTheExtentAndTheLastOneIsShorter) {
  const StreamAxis four{0, true, 4};
  EXPECT_EQ(four.sliceLength(10), 3);
  EXPECT_EQ(four.slices(10), 4);  // 3, 3, 3, 1
  EXPECT_EQ(four.sliceLength(3), 1);
  EXPECT_EQ(four.slices(3), 3);  // fewer slices than asked for when the extent is shorter
  EXPECT_EQ(four.slices(0), 0);
  const StreamAxis by_length{0, false, 256};
  EXPECT_EQ(by_length.sliceLength(1000), 256);
  EXPECT_EQ(by_length.slices(1000), 4);  // 256, 256, 256, 232
  EXPECT_EQ(by_length.slices(100), 1);
  const StreamAxis per_index{0, false, 1};
  EXPECT_EQ(per_index.slices(7), 7);
}

TEST(StreamAxesTest, SlicesThatAreNotOneStrideStepAreRefused) {
  {
    Pointwise p;
    p.z->split(0, 4);
    p.z->parallelize(1, ParallelType::Stream);
    EXPECT_TRUE(throwsError([&] { takeStreamAxes(*p.fusion); },
                            {"loop axis 1", "the inner axis of a split", "outer axis"}));
  }
  {
    Pointwise p;
    p.z->merge(0);
    p.z->parallelize(0, ParallelType::Stream);
    EXPECT_TRUE(throwsError([&] { takeStreamAxes(*p.fusion); }, {"a merge of two axes"}));
  }
  {
    Pointwise p;
    p.z->split(0, 4, false);
    p.z->split(0, 2, false);
    p.z->parallelize(0, ParallelType::Stream);
    EXPECT_TRUE(
        throwsError([&] { takeStreamAxes(*p.fusion); }, {"a split of an axis that was split"}));
  }
  {
    Pointwise p;
    Scalar* slices = makeInputScalar(*p.fusion, DataType::Int64);
    p.z->split(0, slices, false);
    p.z->parallelize(0, ParallelType::Stream);
    EXPECT_TRUE(throwsError([&] { takeStreamAxes(*p.fusion); }, {"symbolic factor"}));
  }
}

TEST(StreamAxesTest, AReducedAxisOtherSchedulingAndTwoStreamAxesAreRefused) {
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2);
    TensorView* rows = sum(x, {1});
    fusion->addOutput(rows);
    rows->parallelize(1, ParallelType::Stream);
    EXPECT_TRUE(throwsError([&] { takeStreamAxes(*fusion); },
                            {"T1", "logical axis 1", "reduction axis", "reduces over it"}));
  }
  {
    Pointwise p;
    p.z->parallelize(0, ParallelType::Stream);
    p.z->parallelize(1, ParallelType::TIDx);
    EXPECT_TRUE(throwsError([&] { takeStreamAxes(*p.fusion); },
                            {"loop axis 1", "TIDx", "only its stream axis"}));
  }
  {
    Pointwise p;
    p.z->split(1, 32);
    p.z->parallelize(0, ParallelType::Stream);
    EXPECT_TRUE(throwsError([&] { takeStreamAxes(*p.fusion); }, {"other scheduling"}));
  }
  {
    Pointwise p;
    p.z->split(0, 2, false);
    p.z->parallelize(0, ParallelType::Stream);
    // One tensor, one stream axis: parallelize itself refuses a second.
    EXPECT_TRUE(throwsError([&] { p.z->parallelize(1, ParallelType::Stream); },
                            {"already Stream", "one axis only"}));
  }
}

}  // namespace
}  // namespace braze
