// segmentFusion with checkers that decide by structure: whole fusions, splits, cycles avoided,
// forwarding, scalar Exprs replicated, the order of merges, errors, and scale.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/segment/segmented_fusion.h"
#include "segment/function_checker.h"
#include "segment/segment_test_fusions.h"
#include "segment/segmented_evaluation.h"
#include "support/error_matchers.h"
#include "support/stacked_layers.h"
#include "support/structural_segment_checker.h"

namespace braze {
namespace {

using test::computes;
using test::FunctionChecker;
using test::StructuralSegmentChecker;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class SegmentEveryCaseTest : public ::testing::TestWithParam<std::tuple<test::SegmentCase, bool>> {
};

TEST_P(SegmentEveryCaseTest, SegmentsComputeTheWholeFusionAndEachGroupIsAskedOnce) {
  const auto& [c, forward] = GetParam();
  const std::unique_ptr<Fusion> fusion = c.make();
  StructuralSegmentChecker checker;
  checker.record_questions = true;
  const SegmentedFusion segmented =
      segmentFusion(*fusion, checker, {.forward_input_chains = forward});
  EXPECT_EQ(checker.repeated_questions, 0);
  ASSERT_FALSE(segmented.segments.empty());
  for (size_t i = 0; i < segmented.segments.size(); ++i) {
    const Segment& segment = segmented.segments[i];
    EXPECT_EQ(segment.id, static_cast<int64_t>(i));
    EXPECT_THAT(segment.scheduler, HasSubstr("fake::"));
    EXPECT_EQ(checker.refusal(segment), std::nullopt) << segmented.toString();
  }
  test::expectSameAsWhole(segmented, test::randomArguments(*fusion, c.sizes, c.scalars));
}

INSTANTIATE_TEST_SUITE_P(Cases, SegmentEveryCaseTest,
                         ::testing::Combine(::testing::ValuesIn(test::segmentCases()),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param).name +
                                  (std::get<1>(info.param) ? "_forwarding" : "_no_forwarding");
                         });

TEST(SegmentFusionTest, AFusionAcceptedWholeIsOneSegment) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("softmax_gelu").make();
  StructuralSegmentChecker checker;
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 1u);
  EXPECT_EQ(checker.calls, 1);
  const Segment& segment = segmented.segments[0];
  EXPECT_EQ(segment.scheduler, "fake::reduction");
  EXPECT_EQ(segment.inputs,
            std::vector<const Val*>(fusion->inputs().begin(), fusion->inputs().end()));
  EXPECT_EQ(segment.outputs,
            std::vector<const Val*>(fusion->outputs().begin(), fusion->outputs().end()));
  EXPECT_EQ(segment.exprs.size(), fusion->exprs().size());
}

TEST(SegmentFusionTest, ReductionsOverTwoAxesAreTwoSegmentsEachComputingTheForwardedTanh) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("two_axes").make();
  StructuralSegmentChecker checker;
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  for (const Segment& segment : segmented.segments) {
    EXPECT_EQ(segment.scheduler, "fake::reduction");
    EXPECT_THAT(segment.inputs, ElementsAre(fusion->inputs()[0]));
    EXPECT_TRUE(computes(segment, OpKind::Tanh));
  }
  EXPECT_THAT(segmented.segments[0].outputs, ElementsAre(fusion->outputs()[0]));
  EXPECT_THAT(segmented.segments[1].outputs, ElementsAre(fusion->outputs()[1]));

  // Without forwarding the tanh is merged with one sum and written for the other, unless the
  // other computes it again from x (as many bytes to read as the tanh, and no write).
  const SegmentedFusion unforwarded = segmentFusion(
      *fusion, checker, {.forward_input_chains = false, .recompute_intermediates = false});
  ASSERT_EQ(unforwarded.segments.size(), 2u);
  EXPECT_EQ(unforwarded.segments[0].outputs.size(), 2u);
  const SegmentedFusion recomputed =
      segmentFusion(*fusion, checker, {.forward_input_chains = false});
  ASSERT_EQ(recomputed.segments.size(), 2u);
  for (const Segment& segment : recomputed.segments) {
    EXPECT_THAT(segment.inputs, ElementsAre(fusion->inputs()[0]));
    EXPECT_EQ(segment.outputs.size(), 1u);
    EXPECT_TRUE(computes(segment, OpKind::Tanh));
  }
}

TEST(SegmentFusionTest, AForwardedTensorThatIsAnOutputIsWrittenOnce) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("forwarded_output").make();
  StructuralSegmentChecker checker;
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  const Val* xf = fusion->outputs()[0];
  EXPECT_THAT(segmented.segments[0].outputs, ElementsAre(xf, fusion->outputs()[1]));
  EXPECT_THAT(segmented.segments[1].outputs, ElementsAre(fusion->outputs()[2]));
  EXPECT_TRUE(computes(segmented.segments[1], OpKind::Cast));
}

TEST(SegmentFusionTest, AForwardedOutputNoGroupCanWriteGetsASegmentOfItsOwn) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("forwarded_output").make();
  // Refuses a reduction next to a full-size output, as the reduction scheduler does.
  FunctionChecker checker([&](const Segment& segment) -> std::optional<std::string> {
    const bool reduces = computes(segment, OpKind::Sum);
    for (const Val* output : segment.outputs) {
      if (reduces && !output->as<TensorView>()->hasReduction()) return std::nullopt;
    }
    return std::string(reduces ? "reduction" : "pointwise");
  });
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  // The cast alone, then both sums (siblings reading x).
  ASSERT_EQ(segmented.segments.size(), 2u);
  EXPECT_THAT(segmented.segments[0].outputs, ElementsAre(fusion->outputs()[0]));
  EXPECT_EQ(segmented.segments[0].scheduler, "pointwise");
  EXPECT_THAT(segmented.segments[1].outputs,
              ElementsAre(fusion->outputs()[1], fusion->outputs()[2]));
  test::expectSameAsWhole(segmented, test::randomArguments(*fusion, {{3, 4}}));
}

TEST(SegmentFusionTest, ScalarExprsAndFactoriesAreReplicatedIntoEachSegment) {
  for (const char* name : {"scalar_inputs", "iota"}) {
    SCOPED_TRACE(name);
    const std::unique_ptr<Fusion> fusion = test::segmentCase(name).make();
    StructuralSegmentChecker checker;
    const SegmentedFusion segmented = segmentFusion(*fusion, checker);
    ASSERT_EQ(segmented.segments.size(), 2u);
    for (const Segment& segment : segmented.segments) {
      if (std::string(name) == "iota") {
        EXPECT_TRUE(computes(segment, OpKind::Iota));
      } else {
        // alpha * 2.0, a scalar Expr, in both.
        EXPECT_EQ(std::count_if(segment.exprs.begin(), segment.exprs.end(),
                                [](const Expr* e) { return !e->output(0)->isA<TensorView>(); }),
                  1);
      }
    }
  }
}

TEST(SegmentFusionTest, MergesThatWouldMakeACycleTakeThePathBetweenOrNothing) {
  // a -> column sum -> broadcast -> b, and a -> b directly: a and b cannot merge without the
  // column sum, and with it the group reduces two axes.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  TensorView* a = add(x, y);
  TensorView* columns = broadcast(sum(a, {0}), {true, false});
  TensorView* b = mul(a, columns);
  fusion.addOutput(sum(b, {1}));
  StructuralSegmentChecker checker;
  const SegmentedFusion segmented = segmentFusion(fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{3, 5}, {3, 5}}));

  // A checker that accepts any group: the hull a, column sum, b is one segment.
  FunctionChecker anything([](const Segment&) { return std::string("any"); });
  EXPECT_EQ(segmentFusion(fusion, anything).segments.size(), 1u);
}

TEST(SegmentFusionTest, MergesKeepingMoreBytesOnChipComeFirst) {
  // p = x + y [rows, n] -> q = sum(p) [rows] -> r = q + z [rows]; any two of them merge, not all
  // three.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  TensorView* z = makeSymbolicTensor(fusion, 1);
  TensorView* p = add(x, y);
  TensorView* q = sum(p, {1});
  TensorView* r = add(q, z);
  fusion.addOutput(r);
  FunctionChecker pairs([](const Segment& segment) -> std::optional<std::string> {
    if (segment.exprs.size() > 2) return std::nullopt;
    return std::string("pairs");
  });
  SegmentedFusion segmented = segmentFusion(fusion, pairs);
  ASSERT_EQ(segmented.segments.size(), 2u);
  EXPECT_THAT(segmented.segments[0].outputs, ElementsAre(q));  // p stays on chip

  // With q counted as larger than p, q stays on chip instead.
  SegmenterOptions options;
  options.tensor_bytes = [&](const TensorView& tv) -> std::optional<int64_t> {
    return &tv == q ? 1 << 30 : 1 << 20;
  };
  segmented = segmentFusion(fusion, pairs, options);
  ASSERT_EQ(segmented.segments.size(), 2u);
  EXPECT_THAT(segmented.segments[0].outputs, ElementsAre(p));
}

TEST(SegmentFusionTest, SiblingsReadingOneInputMerge) {
  // Two column sums of x (dw and db in a norm backward) share no producer-consumer edge.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  TensorView* rows = sum(add(x, y), {1});
  fusion.addOutput(rows);
  fusion.addOutput(sum(mul(x, y), {0}));
  fusion.addOutput(sum(sub(x, y), {0}));
  StructuralSegmentChecker checker;
  const SegmentedFusion segmented = segmentFusion(fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  EXPECT_THAT(segmented.segments[0].outputs, ElementsAre(rows));
  EXPECT_THAT(segmented.segments[1].outputs, ElementsAre(fusion.outputs()[1], fusion.outputs()[2]));
}

TEST(SegmentFusionTest, AnExprNoSchedulerAcceptsIsNamed) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(sum(exp(add(x, y)), {1}));
  StructuralSegmentChecker checker({OpKind::Exp});
  EXPECT_TRUE(test::throwsError([&] { segmentFusion(fusion, checker); },
                                {"segmentFusion: no scheduler accepts T3 = exp(T2)",
                                 "neither alone nor merged with its neighbours",
                                 "fake: exp is refused", "Its segment alone:"}));
}

TEST(SegmentFusionTest, AFusionWithoutTensorExprsHasNoSegments) {
  Fusion fusion;
  Scalar* a = makeInputScalar(fusion, DataType::Float64);
  fusion.addOutput(mul(a, 2.0));
  StructuralSegmentChecker checker;
  EXPECT_TRUE(segmentFusion(fusion, checker).segments.empty());
  EXPECT_EQ(checker.calls, 0);
}

TEST(SegmentFusionTest, IsDeterministic) {
  const std::unique_ptr<Fusion> fusion = test::segmentCase("layer_norm_bwd_float32").make();
  StructuralSegmentChecker a;
  StructuralSegmentChecker b;
  EXPECT_EQ(segmentFusion(*fusion, a).toString(), segmentFusion(*fusion, b).toString());
}

// A random DAG of [rows, n] ops (elementwise, and means over either axis kept as broadcasts),
// segmented by a checker that accepts single Exprs and a pseudo-random half of larger groups:
// whatever the merges, the segments are in an order that runs, and compute the fusion.
TEST(SegmentFusionTest, RandomGraphsAndCheckersGiveRunnableSegmentations) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 random(seed);
    Fusion fusion;
    std::vector<TensorView*> values = {makeSymbolicTensor(fusion, 2),
                                       makeSymbolicTensor(fusion, 2)};
    const auto pick = [&] { return values[random() % values.size()]; };
    for (int op = 0; op < 40; ++op) {
      TensorView* a = pick();
      switch (random() % 5) {
        case 0:
          values.push_back(add(a, pick()));
          break;
        case 1:
          values.push_back(mul(a, pick()));
          break;
        case 2:
          values.push_back(tanh(a));
          break;
        case 3:
          values.push_back(sub(a, mean(a, {0}, /*keepdim=*/true)));
          break;
        default:
          values.push_back(sub(a, mean(pick(), {1}, /*keepdim=*/true)));
          break;
      }
    }
    for (size_t i = values.size() - 3; i < values.size(); ++i) fusion.addOutput(values[i]);
    FunctionChecker checker([&](const Segment& segment) -> std::optional<std::string> {
      size_t tensor_exprs = 0;
      uint64_t hash = seed;
      for (const Expr* expr : segment.exprs) {
        hash = hash * 1099511628211ull ^ static_cast<uint64_t>(expr->id());
        if (expr->output(0)->isA<TensorView>() && expr->inputs().size() > 0) ++tensor_exprs;
      }
      if (tensor_exprs <= 1 || hash % 2 == 0) return std::string("random");
      return std::nullopt;
    });
    // Without forwarding, every single Expr is a group the checker accepts.
    const SegmentedFusion segmented =
        segmentFusion(fusion, checker, {.forward_input_chains = false});
    test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{3, 4}, {3, 4}}, {}, seed));
  }
}

TEST(SegmentFusionTest, StackedLayersSplitAtEachColumnMean) {
  for (test::LayerNorm norm : {test::LayerNorm::Layer, test::LayerNorm::Rms}) {
    const std::unique_ptr<Fusion> fusion =
        test::stackedLayers(300, norm, DataType::BFloat16, /*whole_layers=*/true);
    StructuralSegmentChecker checker;
    checker.record_questions = true;
    const auto start = std::chrono::steady_clock::now();
    const SegmentedFusion segmented = segmentFusion(*fusion, checker);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 2.0) << "segmenting " << fusion->exprs().size() << " exprs";
    EXPECT_EQ(checker.repeated_questions, 0);
    // Each layer: its norm, GELU and residual with the next layer's row reductions; the
    // column mean alone.
    const int64_t layers = static_cast<int64_t>(fusion->inputs().size()) - 1;
    EXPECT_LE(static_cast<int64_t>(segmented.segments.size()), 2 * layers + 1);
    test::expectSameAsWhole(segmented, test::randomArguments(*fusion, [&] {
                              std::vector<std::vector<int64_t>> sizes = {{3, 8}};
                              for (int64_t i = 0; i < layers; ++i) sizes.push_back({8});
                              return sizes;
                            }()));
  }
}

}  // namespace
}  // namespace braze
