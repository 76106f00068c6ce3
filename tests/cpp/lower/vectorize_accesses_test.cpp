// Vectorized copies become one access, with what the launch must guarantee recorded; the
// schedules whose vectors cannot be one access are refused naming the axis.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/lower/lower.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/sched/inlining.h"
#include "support/error_matchers.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::throwsError;

TEST(VectorizeAccessesTest, CopiesBecomeOneVectorAccessCheckedOncePerVector) {
  // The launch checks that the vectorized extent is a multiple of 4, so the split by 4 divides
  // evenly and the bound is on the vector's index, not on its lanes.
  auto fusion = test::findScheduledCase("pointwise_vectorize").build();
  const std::string ir = printKernelIr(lowerFusion(*fusion));
  EXPECT_NE(ir.find("if bidx * 128 + tidx < braze::ceilDiv(T0.size[0] * T0.size[1], 4):\n"
                    "    vector<4> T4[0] = T0[bidx * 512 + tidx * 4]"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("must be a multiple of 4 for vectorized accesses"), std::string::npos) << ir;
  EXPECT_NE(ir.find("vector<4> T3[bidx * 512 + tidx * 4] = T6[0]"), std::string::npos) << ir;
}

TEST(VectorizeAccessesTest, RecordsAlignmentAndDivisibilityForTheLaunch) {
  auto fusion = test::findScheduledCase("pointwise_vectorize").build();
  const GeneratedKernel kernel = generateCuda(*fusion);
  ASSERT_EQ(kernel.alignments.size(), 3u);
  for (const GeneratedKernel::Alignment& a : kernel.alignments) {
    EXPECT_EQ(a.bytes, 16);
    EXPECT_TRUE(a.stride_dims.empty());
  }
  bool divisibility = false;
  for (const auto& [check, message] : kernel.launch_checks) {
    if (message.find("must be a multiple of 4 for vectorized accesses") != std::string::npos)
      divisibility = true;
  }
  EXPECT_TRUE(divisibility);
}

TEST(VectorizeAccessesTest, HalfVectorsAreSixteenBytes) {
  auto fusion = test::findScheduledCase("pointwise_vectorize_half").build();
  const GeneratedKernel kernel = generateCuda(*fusion);
  EXPECT_NE(kernel.source.find("braze::vectorCopy<braze::Half, 8>(&T4[0], &T0.data["),
            std::string::npos);
  ASSERT_FALSE(kernel.alignments.empty());
  EXPECT_EQ(kernel.alignments[0].bytes, 16);
}

TEST(VectorizeAccessesTest, OnlyTheSplitDimMustDivideWhenOuterDimsAreMerged) {
  // x [s0, s1, s2] read as [s1, s0 * s2 / 4, 4]: the first lane is at ... * s1 * s2 + ... * 4,
  // aligned whenever s2 (the split dim) is a multiple of 4, whatever s1 is.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  TensorView* out = neg(x);
  fusion.addOutput(out);
  TensorView* cache = x->cacheAfter();
  for (TensorView* tv : {cache, out}) tv->reorder({{1, 0}})->split(2, 4)->merge(1, 2);
  cache->parallelize(2, ParallelType::Vectorize);
  inlineAt(cache, 2);
  const GeneratedKernel kernel = generateCuda(fusion);
  const std::string s1 = "(" + x->axis(1)->extent()->name() + ")";
  const std::string s2 = "(" + x->axis(2)->extent()->name() + ")";
  bool checks_s2 = false;
  for (const auto& [check, message] : kernel.launch_checks) {
    EXPECT_EQ(message.find(s1), std::string::npos) << message;
    checks_s2 = checks_s2 || message.find(s2) != std::string::npos;
  }
  EXPECT_TRUE(checks_s2);
}

// out = neg(x) for x [64, 64] read through a register cache whose innermost axis, of
// `width` elements, is vectorized: split from dim 1 (consecutive), or from dim 0 (64 apart).
std::unique_ptr<Fusion> vectorizedCopy(bool along_rows, int64_t width, DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeInputTensor(*fusion, {.dtype = dtype, .sizes = {64, 64}});
  fusion->addOutput(neg(x));
  TensorView* cache = x->cacheAfter();
  if (along_rows) {
    cache->split(0, width);
    cache->reorder({{1, 2}});
  } else {
    cache->split(1, width);
  }
  // Bypasses parallelize()'s validation: lowering must refuse on its own.
  cache->loopAxis(2)->parallelize(ParallelType::Vectorize);
  return fusion;
}

TEST(VectorizeAccessesTest, NonConsecutiveLanesAreRefused) {
  auto fusion = vectorizedCopy(/*along_rows=*/true, 4, DataType::Float32);
  EXPECT_TRUE(throwsError(
      [&] { lowerFusion(*fusion); },
      {"vectorized axis", "does not walk consecutive elements of T0", "innermost contiguous dim"}));
}

TEST(VectorizeAccessesTest, VectorsWiderThanSixteenBytesAreRefused) {
  auto fusion = vectorizedCopy(/*along_rows=*/false, 8, DataType::Float32);
  EXPECT_TRUE(throwsError([&] { lowerFusion(*fusion); },
                          {"vectorizing T2", "by 8 float32 elements is a 32-byte access"}));
}

// Inputs the schedule reads through the read-only path (Fusion::setReadOnlyLoads): their vector
// loads, of 2 to 16 bytes, print as braze::vectorLoadReadOnly and compile for sm_90; the other
// input's stay plain copies.
TEST(VectorizeAccessesTest, ReadOnlyInputsLoadThroughTheNonCoherentPath) {
  struct Case {
    DataType dtype;
    int64_t width;
  };
  for (const Case& c :
       {Case{DataType::Float8_e4m3fn, 2}, Case{DataType::Float16, 2}, Case{DataType::Float32, 2},
        Case{DataType::BFloat16, 8}, Case{DataType::Float32, 4}}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = c.dtype, .sizes = {-1, -1}});
    TensorView* y = makeInputTensor(fusion, {.dtype = c.dtype, .sizes = {-1, -1}});
    TensorView* xf = cast(x, DataType::Float32);
    TensorView* yf = cast(y, DataType::Float32);
    TensorView* out = add(xf, yf);
    fusion.addOutput(out);
    fusion.setReadOnlyLoads(x);
    TensorView* x_cache = x->cacheAfter();
    TensorView* y_cache = y->cacheAfter();
    for (TensorView* tv : {x_cache, y_cache, xf, yf, out}) {
      tv->split(1, c.width);
      tv->axis(0)->parallelize(ParallelType::BIDx);
      tv->axis(1)->parallelize(ParallelType::TIDx);
    }
    x_cache->parallelize(2, ParallelType::Vectorize);
    y_cache->parallelize(2, ParallelType::Vectorize);
    inlineMost(fusion);
    const GeneratedKernel kernel = generateCuda(fusion);
    const std::string what = std::string(toString(c.dtype)) + " x " + std::to_string(c.width);
    // The statement that fills each input's cache.
    auto loadOf = [&](const TensorView* cache) {
      const size_t at = kernel.source.find(">(&" + cache->name() + "[");
      if (at == std::string::npos) return std::string();
      const size_t begin = kernel.source.rfind('\n', at) + 1;
      return kernel.source.substr(begin, kernel.source.find('\n', at) - begin);
    };
    const std::string width = ", " + std::to_string(c.width) + ">(&";
    EXPECT_NE(loadOf(x_cache).find("braze::vectorLoadReadOnly<"), std::string::npos)
        << what << ": " << loadOf(x_cache);
    EXPECT_NE(loadOf(x_cache).find(width), std::string::npos) << what << ": " << loadOf(x_cache);
    EXPECT_NE(loadOf(y_cache).find("braze::vectorCopy<"), std::string::npos)
        << what << ": " << loadOf(y_cache);
    EXPECT_NO_THROW(CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                            {.arch = driver::GpuArch{9, 0, false}}))
        << what;
  }
}

}  // namespace
}  // namespace braze
