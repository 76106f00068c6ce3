// segmentFusion with the shipped schedulers, asked through the scheduler registry with the
// sizes of one run: norm backwards the inner-outer scheduler refuses whole at these row
// lengths come out as segments the schedulers accept, computing what the whole fusion does,
// with the column sums computing xhat again from x instead of reading it from memory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "braze/ir/printer.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "braze/segment/segmented_fusion.h"
#include "segment/segment_test_fusions.h"
#include "segment/segmented_evaluation.h"
#include "support/normalization_fusions.h"
#include "support/registry_segment_checker.h"
#include "support/shipped_registry.h"

namespace braze {
namespace {

using test::Normalization;
using test::RegistrySegmentChecker;
using ::testing::HasSubstr;
using ::testing::Not;

const SchedulerRegistry& registry() {
  static const test::ShippedRegistry shipped;
  return shipped.registry();
}

// Without braze::tma_ws_normalization, which on sm_90 takes norm backward whole from rows of
// 32 KiB: how the segmenter splits it where no scheduler does.
const SchedulerRegistry& registryWithoutRowsInSharedMemory() {
  static const test::ShippedRegistry shipped("-braze::tma_ws_normalization");
  return shipped.registry();
}

std::vector<const Expr*> allExprs(const Fusion& fusion) {
  const std::vector<Expr*> exprs = fusion.exprs();
  return {exprs.begin(), exprs.end()};
}

// Every segment accepted again by the registry, and the segmentation printed with the params
// summaries (the test log shows what each case gets).
void expectAccepted(const SegmentedFusion& segmented, RegistrySegmentChecker& checker,
                    const std::string& title, const SchedulerRegistry& chooser = registry()) {
  std::cout << "== " << title << ": " << segmented.segments.size() << " segments\n";
  for (const Segment& segment : segmented.segments) {
    const SchedulerChoice choice = chooser.choose(*segment.fusion, checker.runtimeInfo(segment));
    ASSERT_TRUE(choice.accepted()) << choice.describeAttempts();
    EXPECT_EQ(segment.scheduler, choice.scheduler->id + "@" + choice.scheduler->version);
    EXPECT_EQ(checker.summary(segment), choice.summary);
    std::cout << "segment " << segment.id << ": " << segment.scheduler << " " << choice.summary
              << "\n";
  }
  std::cout << segmented.toString();
}

// The tensors segments pass to later ones: "T11 float32 [4096, 16384] 268435456 bytes, segment
// 0 -> 1", one line each, for the sizes the checker was made with.
std::string describeBoundaries(const SegmentedFusion& segmented, RegistrySegmentChecker& checker) {
  std::ostringstream os;
  for (const Segment& segment : segmented.segments) {
    for (const Val* input : segment.inputs) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr || segmented.original->isInput(tv)) continue;
      const std::vector<int64_t> sizes = checker.sizesOf(*tv);
      int64_t bytes = sizeInBytes(tv->dtype());
      os << tv->name() << " " << toString(tv->dtype()) << " [";
      for (size_t d = 0; d < sizes.size(); ++d) {
        os << (d ? ", " : "") << sizes[d];
        bytes *= sizes[d];
      }
      os << "] " << bytes << " bytes, to segment " << segment.id << "\n";
    }
  }
  return os.str();
}

// Whether a segment reads a float32 tensor of the rows' shape that another segment wrote.
bool passesFloatRows(const SegmentedFusion& segmented) {
  for (const Segment& segment : segmented.segments) {
    for (const Val* input : segment.inputs) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr || segmented.original->isInput(tv)) continue;
      if (tv->dtype() == DataType::Float32 && tv->logicalNoReductions().size() == 2) return true;
    }
  }
  return false;
}

struct NormCase {
  Normalization kind;
  DataType dtype;
  int64_t rows;
  int64_t n;
};

std::string caseName(const NormCase& c) {
  return toString(c.kind) + "_" + std::string(toString(c.dtype)) + "_" + std::to_string(c.rows) +
         "x" + std::to_string(c.n);
}

class NormBackwardSegmentationTest : public ::testing::TestWithParam<NormCase> {};

TEST_P(NormBackwardSegmentationTest, SplitIntoSegmentsTheSchedulersAccept) {
  const NormCase& c = GetParam();
  const std::unique_ptr<Fusion> fusion = test::makeNormalization(c.kind, c.dtype);
  RegistrySegmentChecker checker(registryWithoutRowsInSharedMemory(), *fusion,
                                 test::normalizationInputSizes(c.kind, c.rows, c.n));
  // Refused whole: the rows do not fit in registers next to the column partials.
  // The shipped schedulers take it whole where the rows fit in shared memory.
  RegistrySegmentChecker shipped(registry(), *fusion,
                                 test::normalizationInputSizes(c.kind, c.rows, c.n));
  if (c.n * sizeInBytes(c.dtype) * 2 <= 512 * 1024) {
    const SegmentedFusion one = segmentFusion(*fusion, shipped);
    ASSERT_EQ(one.segments.size(), 1u) << one.toString();
    EXPECT_THAT(one.segments[0].scheduler, HasSubstr("braze::tma_ws_normalization@"));
  }
  const Segment whole = extractSegment(*fusion, allExprs(*fusion));
  EXPECT_EQ(checker.accepts(whole), std::nullopt);
  EXPECT_THAT(checker.refusalReason(whole), HasSubstr("schedule the column sums separately"));

  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  EXPECT_GE(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, caseName(c), registryWithoutRowsInSharedMemory());
  const std::string boundaries = describeBoundaries(segmented, checker);
  std::cout << "passed between segments:\n" << (boundaries.empty() ? "nothing\n" : boundaries);
  // The column sums (dw, db) are a reduction segment of their own, which computes xhat from x,
  // mean and rstd rather than reading it as float32 rows.
  const Segment& last = segmented.segments.back();
  EXPECT_THAT(last.scheduler, HasSubstr("braze::reduction@"));
  EXPECT_FALSE(passesFloatRows(segmented)) << boundaries << segmented.toString();
  // Without recomputation, xhat is written and read back.
  RegistrySegmentChecker materializing(registryWithoutRowsInSharedMemory(), *fusion,
                                       test::normalizationInputSizes(c.kind, c.rows, c.n));
  const SegmentedFusion materialized =
      segmentFusion(*fusion, materializing, {.recompute_intermediates = false});
  EXPECT_TRUE(passesFloatRows(materialized)) << materialized.toString();
  // Small sizes, same segments: the pieces compute what the whole fusion computes.
  test::expectSameAsWhole(
      segmented,
      test::randomArguments(*fusion, test::normalizationInputSizes(c.kind, 4, 16), {}, 11));
}

INSTANTIATE_TEST_SUITE_P(
    RowsTooLongForColumnSums, NormBackwardSegmentationTest,
    // Rows of 8192 and shorter are one inner-outer kernel (inner_outer tests), and rows of 16384
    // but for RMS norm's 2-byte ones.
    ::testing::Values(NormCase{Normalization::LayerNormBackward, DataType::BFloat16, 2048, 32768},
                      NormCase{Normalization::LayerNormBackward, DataType::Float32, 2048, 32768},
                      NormCase{Normalization::LayerNormBackward, DataType::BFloat16, 1024, 65536},
                      NormCase{Normalization::LayerNormBackward, DataType::Float32, 1024, 65536},
                      NormCase{Normalization::RmsNormBackward, DataType::BFloat16, 4096, 16384},
                      NormCase{Normalization::RmsNormBackward, DataType::Float32, 2048, 32768},
                      NormCase{Normalization::RmsNormBackward, DataType::BFloat16, 1024, 65536},
                      NormCase{Normalization::RmsNormBackward, DataType::Float32, 1024, 65536},
                      NormCase{Normalization::LayerNormBackward, DataType::BFloat16, 256, 262144},
                      NormCase{Normalization::RmsNormBackward, DataType::BFloat16, 256, 262144}),
    [](const auto& info) { return caseName(info.param); });

TEST(RegistrySegmentationTest, ReductionsOverTwoAxesAreTwoReductionSegments) {
  const test::SegmentCase& c = test::segmentCase("two_axes");
  const std::unique_ptr<Fusion> fusion = c.make();
  RegistrySegmentChecker checker(registry(), *fusion, {{1024, 4096}});
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, "two_axes");
  for (const Segment& segment : segmented.segments)
    EXPECT_THAT(segment.scheduler, HasSubstr("braze::reduction@"));
  test::expectSameAsWhole(segmented, test::randomArguments(*fusion, c.sizes));
}

TEST(RegistrySegmentationTest, SoftmaxIsOneInnerOuterSegment) {
  const std::unique_ptr<Fusion> fusion =
      test::makeNormalization(Normalization::Softmax, DataType::BFloat16);
  RegistrySegmentChecker checker(registry(), *fusion, {{1024, 4096}});
  const SegmentedFusion segmented = segmentFusion(*fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 1u);
  EXPECT_EQ(checker.calls, 1);
  expectAccepted(segmented, checker, "softmax");
  EXPECT_THAT(segmented.segments[0].scheduler, HasSubstr("braze::inner_outer@"));
}

// segment_set puts its producer and its reader in different kernels, though one pointwise
// kernel could compute both: the copy is written to global memory and read back.
TEST(RegistrySegmentationTest, SegmentSetSplitsWhatOneKernelWouldCompute) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = segment_set(exp(x));
  fusion.addOutput(neg(add(y, x)));
  RegistrySegmentChecker checker(registry(), fusion, {{64, 96}});
  const SegmentedFusion segmented = segmentFusion(fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, "segment_set");
  EXPECT_EQ(describeBoundaries(segmented, checker),
            y->name() + " float32 [64, 96] 24576 bytes, to segment 1\n");
  // Inside its segment the copy is a plain set, which every scheduler takes.
  EXPECT_THAT(printMath(*segmented.segments[0].fusion), HasSubstr("set("));
  EXPECT_THAT(printMath(*segmented.segments[0].fusion), Not(HasSubstr("segment_set(")));
  test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{64, 96}}));
}

// A tensor read at data-dependent positions must come from memory written before the kernel
// starts: gather of a computed tensor is two kernels.
TEST(RegistrySegmentationTest, IndexedTensorComputedInTheFusionIsWrittenFirst) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeSymbolicTensor(fusion, 2, DataType::Int64);
  TensorView* e = exp(x);
  fusion.addOutput(mul(gather(e, 1, index), 2.0));
  RegistrySegmentChecker checker(registry(), fusion, {{16, 40}, {16, 8}});
  const SegmentedFusion segmented = segmentFusion(fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, "gather of exp");
  EXPECT_EQ(describeBoundaries(segmented, checker),
            e->name() + " float32 [16, 40] 2560 bytes, to segment 1\n");
  // Indices in [-2, 2]: valid for the 40 columns.
  test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{16, 40}, {16, 8}}));
}

// A tensor stride_order lays out, read by a later segment: both sides agree on its layout
// (the reader's input is declared dense in the same order).
TEST(RegistrySegmentationTest, StrideOrderLayoutCrossesSegments) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* index = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* column_major = stride_order(exp(x), {0, 1});
  fusion.addOutput(column_major);
  fusion.addOutput(index_select(column_major, 0, index));
  RegistrySegmentChecker checker(registry(), fusion, {{24, 32}, {5}});
  const SegmentedFusion segmented = segmentFusion(fusion, checker);
  ASSERT_EQ(segmented.segments.size(), 2u);
  expectAccepted(segmented, checker, "stride_order");
  const Segment& reader = segmented.segments[1];
  // The original's inputs first (the index), then the tensor the first segment wrote.
  ASSERT_EQ(reader.fusion->inputs().size(), 2u);
  EXPECT_EQ(reader.fusion->inputs()[1]->as<TensorView>()->allocationOrder(),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(segmented.segments[0].fusion->outputs()[0]->as<TensorView>()->allocationOrder(),
            (std::vector<int64_t>{1, 0}));
  test::expectSameAsWhole(segmented, test::randomArguments(fusion, {{24, 32}, {5}}));
}

}  // namespace
}  // namespace braze
