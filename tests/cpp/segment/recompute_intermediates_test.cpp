// The segmenter's recomputation of intermediates (core/src/segment/recompute_intermediates.cpp)
// with checkers that decide by structure: a reader computes an intermediate again when its
// sources take fewer bytes, keeps reading it when they take more or when the checker refuses
// the reader with the copied Exprs, and a writer nobody reads from any more disappears.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/segment/segmented_fusion.h"
#include "segment/function_checker.h"
#include "segment/segmented_evaluation.h"
#include "support/structural_segment_checker.h"

namespace braze {
namespace {

using test::computes;
using test::FunctionChecker;
using test::StructuralSegmentChecker;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// The structural checker's answer, except where `refuse` says no.
FunctionChecker refusingWhere(std::function<bool(const Segment&)> refuse) {
  auto structural = std::make_shared<StructuralSegmentChecker>();
  return FunctionChecker([structural, refuse](const Segment& segment) {
    return refuse(segment) ? std::nullopt : structural->accepts(segment);
  });
}

bool writes(const Segment& segment, const Val* tv) {
  return std::find(segment.outputs.begin(), segment.outputs.end(), tv) != segment.outputs.end();
}

// The tensors one segment writes for another.
std::vector<const Val*> passed(const SegmentedFusion& segmented) {
  std::vector<const Val*> tensors;
  for (const Segment& segment : segmented.segments) {
    for (const Val* input : segment.inputs) {
      if (input->isA<TensorView>() && !segmented.original->isInput(input)) tensors.push_back(input);
    }
  }
  return tensors;
}

// xhat = (float(x) - mean) * rstd from bfloat16 x, read by a row sum and a column sum (which
// the structural checker keeps apart): the column sum reads x, mean and rstd instead.
struct Normalized {
  Fusion fusion;
  TensorView* x;
  TensorView* xhat;
  TensorView* rows;
  TensorView* columns;

  Normalized() {
    x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
    TensorView* mean = makeSymbolicTensor(fusion, 1);
    TensorView* rstd = makeSymbolicTensor(fusion, 1);
    TensorView* dy = makeSymbolicTensor(fusion, 2);
    xhat = mul(sub(cast(x, DataType::Float32), broadcast(mean, {false, true})),
               broadcast(rstd, {false, true}));
    rows = sum(mul(dy, xhat), {1});
    columns = sum(mul(dy, xhat), {0});
    fusion.addOutput(rows);
    fusion.addOutput(columns);
  }

  std::vector<EvaluatorArgument> arguments() const {
    return test::randomArguments(fusion, {{5, 7}, {5}, {5}, {5, 7}});
  }
};

TEST(RecomputeIntermediatesTest, AReaderComputesAgainWhatItsSourcesMakeInFewerBytes) {
  Normalized n;
  StructuralSegmentChecker checker;
  checker.record_questions = true;
  const SegmentedFusion segmented = segmentFusion(n.fusion, checker);
  EXPECT_EQ(checker.repeated_questions, 0);
  ASSERT_EQ(segmented.segments.size(), 2u) << segmented.toString();
  EXPECT_THAT(passed(segmented), IsEmpty()) << segmented.toString();
  for (const Segment& segment : segmented.segments) {
    EXPECT_TRUE(computes(segment, OpKind::Sub));
    EXPECT_FALSE(writes(segment, n.xhat));
    EXPECT_EQ(segment.outputs.size(), 1u);
    EXPECT_EQ(segment.scheduler, "fake::reduction");
  }
  test::expectSameAsWhole(segmented, n.arguments());

  // Without the pass, one segment writes xhat for the other.
  const SegmentedFusion materialized =
      segmentFusion(n.fusion, checker, {.recompute_intermediates = false});
  ASSERT_EQ(materialized.segments.size(), 2u);
  EXPECT_THAT(passed(materialized), UnorderedElementsAre(n.xhat));
}

TEST(RecomputeIntermediatesTest, AReaderRefusedWithTheCopiedExprsKeepsReading) {
  Normalized n;
  // Refuses the column sum next to the subtraction, which only recomputing xhat brings there
  // (merging the two sums is refused anyway: different dims).
  FunctionChecker checker = refusingWhere([&](const Segment& segment) {
    return writes(segment, n.columns) && computes(segment, OpKind::Sub);
  });
  const SegmentedFusion segmented = segmentFusion(n.fusion, checker);
  EXPECT_THAT(passed(segmented), UnorderedElementsAre(n.xhat));
  StructuralSegmentChecker structural;
  EXPECT_EQ(segmented.toString(),
            segmentFusion(n.fusion, structural, {.recompute_intermediates = false}).toString());
  test::expectSameAsWhole(segmented, n.arguments());
}

TEST(RecomputeIntermediatesTest, SourcesTheReaderDoesNotReadYetAreCounted) {
  // t = x + y, float32 like x and y, read by a row sum and a column sum: computing t again
  // reads x and y (8 bytes an element) to save t's write and read (8 bytes): kept. When the
  // column sum reads x already, only y is new (4 bytes): recomputed.
  for (const bool reads_x : {false, true}) {
    SCOPED_TRACE(reads_x ? "reads x" : "reads z");
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2);
    TensorView* y = makeSymbolicTensor(fusion, 2);
    TensorView* z = makeSymbolicTensor(fusion, 2);
    TensorView* t = add(x, y);
    fusion.addOutput(sum(mul(t, z), {1}));
    fusion.addOutput(sum(mul(t, reads_x ? x : z), {0}));
    StructuralSegmentChecker checker;
    const SegmentedFusion segmented = segmentFusion(fusion, checker);
    ASSERT_EQ(segmented.segments.size(), 2u);
    if (reads_x) {
      EXPECT_THAT(passed(segmented), IsEmpty()) << segmented.toString();
    } else {
      EXPECT_THAT(passed(segmented), UnorderedElementsAre(t)) << segmented.toString();
    }
    test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{4, 6}, {4, 6}, {4, 6}}));
  }
}

TEST(RecomputeIntermediatesTest, AnOriginalOutputSavesOnlyItsRead) {
  // t = x + y is a fusion output: written anyway, so computing it again must read fewer bytes
  // than t alone. As tensor_bytes counts it, x and y together are larger, then smaller.
  for (const int64_t t_bytes : {int64_t{1} << 20, int64_t{1} << 22}) {
    SCOPED_TRACE("t: " + std::to_string(t_bytes) + " bytes");
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2);
    TensorView* y = makeSymbolicTensor(fusion, 2);
    TensorView* t = add(x, y);
    fusion.addOutput(t);
    fusion.addOutput(sum(t, {1}));
    fusion.addOutput(sum(t, {0}));
    SegmenterOptions options;
    options.tensor_bytes = [&](const TensorView& tv) -> std::optional<int64_t> {
      if (&tv == t) return t_bytes;
      return tv.rank() == 2 ? int64_t{1} << 20 : int64_t{1} << 10;
    };
    StructuralSegmentChecker checker;
    const SegmentedFusion segmented = segmentFusion(fusion, checker, options);
    ASSERT_EQ(segmented.segments.size(), 2u);
    const bool written_once = std::count_if(segmented.segments.begin(), segmented.segments.end(),
                                            [&](const Segment& s) { return writes(s, t); }) == 1;
    EXPECT_TRUE(written_once);
    if (t_bytes > (int64_t{1} << 21)) {
      EXPECT_THAT(passed(segmented), IsEmpty()) << segmented.toString();
    } else {
      EXPECT_THAT(passed(segmented), UnorderedElementsAre(t)) << segmented.toString();
    }
    test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{4, 6}, {4, 6}}));
  }
}

TEST(RecomputeIntermediatesTest, AWriterNoOneReadsFromAnyMoreDisappears) {
  // t = tanh(float(x)) read by a row sum and a column sum, neither of which may write t next to
  // its sum (as the reduction scheduler refuses): without forwarding, a pointwise segment
  // writes t for both. Each sum computes t again from x (2 bytes an element against t's 4);
  // the second one saves t's write as well, and the pointwise segment is left with nothing.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
  TensorView* t = tanh(cast(x, DataType::Float32));
  fusion.addOutput(sum(t, {1}));
  fusion.addOutput(sum(t, {0}));
  FunctionChecker checker = refusingWhere([](const Segment& segment) {
    if (!computes(segment, OpKind::Sum)) return false;
    return std::any_of(segment.outputs.begin(), segment.outputs.end(),
                       [](const Val* output) { return !output->as<TensorView>()->hasReduction(); });
  });
  const SegmenterOptions unforwarded = {.forward_input_chains = false};
  EXPECT_EQ(segmentFusion(fusion, checker,
                          {.forward_input_chains = false, .recompute_intermediates = false})
                .segments.size(),
            3u);
  const SegmentedFusion segmented = segmentFusion(fusion, checker, unforwarded);
  ASSERT_EQ(segmented.segments.size(), 2u) << segmented.toString();
  for (const Segment& segment : segmented.segments) {
    EXPECT_THAT(segment.inputs, UnorderedElementsAre(x));
    EXPECT_TRUE(computes(segment, OpKind::Tanh));
    EXPECT_EQ(segment.id, &segment - segmented.segments.data());
  }
  test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{4, 6}}));
}

TEST(RecomputeIntermediatesTest, ASegmentRecomputingManyIntermediatesIsAskedOnce) {
  // Layers of the normalized fusion sharing dy, every row sum before every column sum: the row
  // sums merge into one segment and the column sums into another, which computes every
  // layer's xhat again. All at once: one new question for each of the two segments.
  constexpr int64_t kLayers = 20;
  Fusion fusion;
  TensorView* dy = makeSymbolicTensor(fusion, 2);
  std::vector<TensorView*> xhats;
  std::vector<std::vector<int64_t>> sizes = {{3, 5}};
  for (int64_t i = 0; i < kLayers; ++i) {
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::BFloat16);
    TensorView* mean = makeSymbolicTensor(fusion, 1);
    TensorView* rstd = makeSymbolicTensor(fusion, 1);
    TensorView* xhat = mul(sub(cast(x, DataType::Float32), broadcast(mean, {false, true})),
                           broadcast(rstd, {false, true}));
    fusion.addOutput(sum(mul(dy, xhat), {1}));
    xhats.push_back(xhat);
    sizes.insert(sizes.end(), {{3, 5}, {3}, {3}});
  }
  for (TensorView* xhat : xhats) fusion.addOutput(sum(mul(dy, xhat), {0}));

  StructuralSegmentChecker materializing;
  const SegmentedFusion materialized =
      segmentFusion(fusion, materializing, {.recompute_intermediates = false});
  ASSERT_EQ(materialized.segments.size(), 2u);
  EXPECT_EQ(passed(materialized).size(), static_cast<size_t>(kLayers));

  StructuralSegmentChecker checker;
  checker.record_questions = true;
  const SegmentedFusion segmented = segmentFusion(fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  EXPECT_THAT(passed(segmented), IsEmpty());
  EXPECT_EQ(checker.calls, materializing.calls + 2);
  EXPECT_EQ(checker.repeated_questions, 0);
  test::expectSameAsWhole(segmented, test::randomArguments(fusion, sizes));
}

}  // namespace
}  // namespace braze
