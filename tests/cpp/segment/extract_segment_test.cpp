// extractSegment: segments are standalone fusions (only what they need, new inputs for
// intermediates, extents bound or passed as scalars), and chained on the reference evaluator
// they compute what the whole fusion computes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/segment/segmented_fusion.h"
#include "segment/segment_test_fusions.h"
#include "segment/segmented_evaluation.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<const Expr*> tensorExprs(const Fusion& fusion) {
  std::vector<const Expr*> exprs;
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* output : expr->outputs()) {
      if (output->isA<TensorView>()) {
        exprs.push_back(expr);
        break;
      }
    }
  }
  return exprs;
}

// One segment per tensor Expr: every intermediate goes through memory.
SegmentedFusion exprBySegment(const Fusion& fusion) {
  SegmentedFusion segmented;
  segmented.original = &fusion;
  for (const Expr* expr : tensorExprs(fusion)) {
    const std::vector<const Expr*> one = {expr};
    segmented.segments.push_back(extractSegment(fusion, one));
    segmented.segments.back().id = static_cast<int64_t>(segmented.segments.size()) - 1;
  }
  return segmented;
}

class ExtractEveryExprTest : public ::testing::TestWithParam<test::SegmentCase> {};

TEST_P(ExtractEveryExprTest, ChainedSegmentsComputeTheWholeFusion) {
  const test::SegmentCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = c.make();
  const SegmentedFusion segmented = exprBySegment(*fusion);
  test::expectSameAsWhole(segmented, test::randomArguments(*fusion, c.sizes, c.scalars));
}

TEST_P(ExtractEveryExprTest, TheWholeFusionAsOneSegmentIsTheFusion) {
  const test::SegmentCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = c.make();
  const std::vector<Expr*> all = fusion->exprs();
  const std::vector<const Expr*> exprs(all.begin(), all.end());
  const Segment segment = extractSegment(*fusion, exprs);
  EXPECT_EQ(segment.inputs,
            std::vector<const Val*>(fusion->inputs().begin(), fusion->inputs().end()));
  EXPECT_EQ(segment.outputs,
            std::vector<const Val*>(fusion->outputs().begin(), fusion->outputs().end()));
  // Every Expr, and the scalar Exprs of extents, which Fusion::exprs() does not list.
  for (const Expr* expr : segment.exprs) {
    const bool listed = std::find(exprs.begin(), exprs.end(), expr) != exprs.end();
    EXPECT_TRUE(listed || !expr->output(0)->isA<TensorView>()) << expr->op();
  }
  for (const Expr* expr : exprs) {
    EXPECT_NE(std::find(segment.exprs.begin(), segment.exprs.end(), expr), segment.exprs.end());
  }
  EXPECT_EQ(segment.fusion->exprs().size(), all.size());
  // The same math; only statements nothing needs (a scalar an op builder made and dropped)
  // are left out, which renumbers the scalars after them.
  if (c.name != "slice_reshape") EXPECT_EQ(printMath(*segment.fusion), printMath(*fusion));
}

INSTANTIATE_TEST_SUITE_P(Cases, ExtractEveryExprTest, ::testing::ValuesIn(test::segmentCases()),
                         [](const auto& info) { return info.param.name; });

TEST(ExtractSegmentTest, AnIntermediateBecomesAContiguousInputWithoutReducedDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, true}});
  TensorView* total = sum(x, {1});
  TensorView* y = exp(total);
  fusion.addOutput(y);
  const std::vector<const Expr*> exprs = {y->definition()};
  const Segment segment = extractSegment(fusion, exprs);
  EXPECT_THAT(segment.inputs, ElementsAre(total));
  EXPECT_THAT(segment.outputs, ElementsAre(y));
  EXPECT_EQ(printMath(*segment.fusion),
            "fusion(T0: float32[i0{s0}]) -> (T1)\n"
            "  T1: float32[i1{s0}] = exp(T0)\n");
  // Only what the segment needs: no trace of x or the sum.
  EXPECT_EQ(segment.fusion->allTensors().size(), 2u);

  // The sum's segment keeps x as it is (its layout too) and writes the sum.
  const std::vector<const Expr*> first = {total->definition()};
  const Segment producer = extractSegment(fusion, first);
  EXPECT_THAT(producer.inputs, ElementsAre(x));
  EXPECT_THAT(producer.outputs, ElementsAre(total));
  const auto* input = producer.fusion->inputs()[0]->as<TensorView>();
  EXPECT_EQ(input->contiguity(), x->contiguity());
  EXPECT_EQ(input->allocationOrder(), x->allocationOrder());
}

TEST(ExtractSegmentTest, AnExpandedIntermediateIsReadAsTheTensorItsProducerWrites) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  TensorView* e = expand(broadcast(x, {true, false}), {y->axis(0)->extent(), int64_t{-1}});
  TensorView* z = add(exp(e), y);
  fusion.addOutput(z);
  const std::vector<const Expr*> exprs = {z->definition()->input(0)->definition(), z->definition()};
  const Segment segment = extractSegment(fusion, exprs);
  EXPECT_THAT(segment.inputs, ElementsAre(y, e));
  // The expanded dim is an Iteration dim of the expanded extent, s1, which y binds too. The
  // exp keeps its own domain: its broadcast dim reads equal values along the dim.
  EXPECT_EQ(printMath(*segment.fusion),
            "fusion(T0: float32[i0{s1}, i1{s2}], T1: float32[i2{s1}, i3{s0}]) -> (T3)\n"
            "  T2: float32[b4{1 ex s1}, i5{s0}] = exp(T1)\n"
            "  T3: float32[i6{s1}, i7{s0}] = add(T2, T0)\n");
}

TEST(ExtractSegmentTest, AnExtentNoInputTensorBindsBecomesAScalarInput) {
  const test::SegmentCase& c = test::segmentCase("expand");
  const std::unique_ptr<Fusion> fusion = c.make();
  // exp, broadcast, expand and the mul: they read x only; the expand's size is y's dim 1.
  std::vector<const Expr*> exprs;
  const auto* doubled = fusion->outputs()[0]->as<TensorView>();
  for (const Expr* expr = doubled->definition(); expr != nullptr;
       expr = expr->input(0)->definition())
    exprs.push_back(expr);
  const Segment segment = extractSegment(*fusion, exprs);
  const auto* y = fusion->inputs()[1]->as<TensorView>();
  EXPECT_THAT(segment.inputs, ElementsAre(fusion->inputs()[0], y->axis(1)->extent()));
  EXPECT_EQ(segment.fusion->inputs()[1]->dtype(), DataType::Index);
  EXPECT_THAT(segment.outputs, ElementsAre(doubled, doubled->definition()->input(0)));
  // Runs alone, given the extent's value.
  const std::vector<EvaluatorArgument> arguments = test::randomArguments(*fusion, c.sizes);
  const std::vector<EvaluatorArgument> results =
      evaluateFusion(*segment.fusion, {arguments[0], ScalarValue(int64_t{6})});
  EXPECT_EQ(std::get<HostTensor>(results[0]).sizes(), (std::vector<int64_t>{4, 6}));
}

TEST(ExtractSegmentTest, ASlicedIntermediateBindsItsExtentAndScalarsAreRebuilt) {
  const test::SegmentCase& c = test::segmentCase("slice_reshape");
  const std::unique_ptr<Fusion> fusion = c.make();
  const auto* flat_doubled = fusion->outputs()[0]->as<TensorView>();
  const Expr* reshape_expr = flat_doubled->definition()->input(0)->definition();
  const std::vector<const Expr*> exprs = {reshape_expr};
  const Segment segment = extractSegment(*fusion, exprs);
  // exp(inner) is [s0, s1 - 2]: the new input's extents are leaves its sizes bind, and the
  // reshape's extent s0 * (s1 - 2) is computed from them.
  ASSERT_EQ(segment.inputs.size(), 1u);
  EXPECT_EQ(printMath(*segment.fusion),
            "fusion(T0: float32[i0{s0}, i1{s1}]) -> (T1)\n"
            "  s2: index = mul(s0, s1)\n"
            "  T1: float32[i2{s2}] = reshape(T0)\n");
}

TEST(ExtractSegmentTest, ScalarInputsAndTheScalarExprsOverThemAreCopied) {
  const test::SegmentCase& c = test::segmentCase("scalar_inputs");
  const std::unique_ptr<Fusion> fusion = c.make();
  const auto* row_sum = fusion->outputs()[0]->as<TensorView>();
  const Expr* scale = row_sum->definition()->input(0)->definition();
  const std::vector<const Expr*> exprs = {scale};
  const Segment segment = extractSegment(*fusion, exprs);
  EXPECT_THAT(segment.inputs, ElementsAre(fusion->inputs()[0], fusion->inputs()[1]));
  // alpha * 2 is computed in the segment, and listed among its Exprs.
  ASSERT_EQ(segment.exprs.size(), 2u);
  EXPECT_EQ(segment.exprs[0]->op(), OpKind::Mul);
  EXPECT_FALSE(segment.exprs[0]->output(0)->isA<TensorView>());
  EXPECT_EQ(segment.exprs[1], scale);
}

TEST(ExtractSegmentTest, ExplicitOutputs) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* a = exp(x);
  TensorView* b = neg(a);
  fusion.addOutput(b);
  fusion.addOutput(sum(a, {0}));
  const std::vector<const Expr*> exprs = {a->definition(), b->definition()};
  const std::vector<const Val*> outputs = {b};
  const Segment segment = extractSegment(fusion, exprs, outputs);
  EXPECT_THAT(segment.outputs, ElementsAre(b));
  // By default the exp is written too: the sum outside reads it.
  EXPECT_THAT(extractSegment(fusion, exprs).outputs, ElementsAre(b, a));
  const std::vector<const Val*> wrong = {x};
  EXPECT_TRUE(test::throwsError([&] { extractSegment(fusion, exprs, wrong); },
                                {"output T0", "not a tensor the segment's Exprs compute"}));
}

TEST(ExtractSegmentTest, RefusesAScheduledFusion) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = exp(x);
  fusion.addOutput(y);
  y->merge(0);
  const std::vector<const Expr*> exprs = {y->definition()};
  EXPECT_TRUE(test::throwsError([&] { extractSegment(fusion, exprs); },
                                {"extractSegment: T1 is scheduled", "before scheduling"}));
}

}  // namespace
}  // namespace braze
