// The TMA warp-specialized normalization scheduler on the CPU tier: which fusions and runs it
// takes and why it refuses the others, the plans its heuristics make for a table of shapes and
// devices, and the kernels it writes compiled for sm_90 (no spills; bulk copies, mbarrier waits
// and cluster barriers in the SASS).

#include <gtest/gtest.h>

#include <tuple>

#include "braze/codegen/codegen.h"
#include "braze/codegen/row_program.h"
#include "braze/driver/device_properties.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "support/normalization_fusions.h"
#include "support/sass_listing.h"
#include "tma_ws_normalization_scheduler.h"

namespace braze {
namespace {

namespace tws = tma_ws_normalization;
using test::Normalization;

const std::vector<Normalization> kRowPrograms = {Normalization::Softmax, Normalization::LogSoftmax,
                                                 Normalization::SoftmaxBackward,
                                                 Normalization::LayerNorm, Normalization::RmsNorm};

SchedulerRuntimeInfo infoFor(const Fusion& fusion, Normalization kind, int64_t m, int64_t n,
                             const driver::DeviceProperties& device = driver::h100Properties()) {
  return contiguousRuntimeInfo(fusion, test::normalizationInputSizes(kind, m, n), {}, device);
}

struct BuiltKernel {
  GeneratedKernel kernel;
  CompiledKernel compiled;
  std::string sass;
};

BuiltKernel build(const Fusion& fusion, const tws::TmaWsNormalizationParams& params) {
  auto scheduled = fusion.clone();
  tws::schedule(*scheduled, params);
  GeneratedKernel kernel = generateCuda(*scheduled);
  CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                    {.arch = driver::GpuArch{9, 0, false}});
  std::string sass;
  if (const std::optional<std::string> nvdisasm = test::findNvdisasm())
    sass = test::disassemble(*nvdisasm, compiled.cubin());
  return {std::move(kernel), std::move(compiled), std::move(sass)};
}

TEST(TmaWsNormalizationTest, RowProgramsOfEveryForwardNormalization) {
  for (const Normalization kind : kRowPrograms) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float32}) {
      auto fusion = test::makeNormalization(kind, dtype);
      EXPECT_EQ(tws::canScheduleCompileTime(*fusion), std::nullopt) << test::toString(kind);
    }
  }
  auto shape = analyzeRowProgram(*test::makeNormalization(Normalization::LayerNorm, DataType::BFloat16));
  ASSERT_TRUE(std::holds_alternative<RowProgramShape>(shape)) << std::get<std::string>(shape);
  // The mean, then the variance about it: two passes of one reduction each.
  EXPECT_EQ(std::get<RowProgramShape>(shape).reductions, 2);
  EXPECT_EQ(std::get<RowProgramShape>(shape).passes, 2);
  EXPECT_EQ(std::get<RowProgramShape>(shape).row_inputs.size(), 1u);
}

TEST(TmaWsNormalizationTest, KernelsCompileWithoutSpillsAndUseTheCopyEngine) {
  for (const Normalization kind : kRowPrograms) {
    for (const DataType dtype : {DataType::BFloat16, DataType::Float32}) {
      for (const int64_t n : {int64_t{65536}, int64_t{262144}}) {
        auto fusion = test::makeNormalization(kind, dtype);
        const int64_t m = 300;
        const SchedulerRuntimeInfo info = infoFor(*fusion, kind, m, n);
        // 2 MiB of rows (dy and y in fp32) is more than eight CTAs hold.
        if (kind == Normalization::SoftmaxBackward && dtype == DataType::Float32 && n == 262144)
          continue;
        ASSERT_EQ(tws::canScheduleRunTime(*fusion, info), std::nullopt);
        const tws::TmaWsNormalizationParams params = tws::computeHeuristics(*fusion, info);
        const BuiltKernel built = build(*fusion, params);
        const std::string what = test::toString(kind) + " " + std::string(toString(dtype)) + " " +
                                 std::to_string(n) + " " + tws::toString(params);
        EXPECT_EQ(built.compiled.resources().spill_store_bytes, 0)
            << what << "\n" << built.compiled.compileLog();
        if (built.sass.empty()) continue;
        EXPECT_GE(test::countInstructions(built.sass, "UBLKCP.S.G"), 1) << what;
        EXPECT_GE(test::countInstructions(built.sass, "SYNCS.PHASECHK"), 1) << what;
        if (params.cluster > 1) {
          EXPECT_GE(test::countInstructions(built.sass, "UCGABAR_ARV"), 1) << what;
        }
      }
    }
  }
}

TEST(TmaWsNormalizationTest, PlansForATableOfShapes) {
  // Rows split over the fewest CTAs that leave two per SM; one CTA of 512 threads per SM only
  // where two do not fit eight CTAs.
  struct Case {
    Normalization kind;
    DataType dtype;
    int64_t n;
    int64_t cluster, chunk, threads, vector;
  };
  for (const Case& c : std::vector<Case>{
           {Normalization::Softmax, DataType::BFloat16, 65536, 2, 32768, 256, 8},
           {Normalization::Softmax, DataType::Float32, 65536, 4, 16384, 256, 4},
           {Normalization::Softmax, DataType::BFloat16, 262144, 8, 32768, 256, 8},
           {Normalization::Softmax, DataType::Float32, 262144, 8, 32768, 512, 4},
           {Normalization::SoftmaxBackward, DataType::BFloat16, 262144, 8, 32768, 512, 8},
           {Normalization::LayerNorm, DataType::Float32, 65536, 4, 16384, 256, 4},
       }) {
    auto fusion = test::makeNormalization(c.kind, c.dtype);
    const SchedulerRuntimeInfo info = infoFor(*fusion, c.kind, 1024, c.n);
    ASSERT_EQ(tws::canScheduleRunTime(*fusion, info), std::nullopt);
    const tws::TmaWsNormalizationParams params = tws::computeHeuristics(*fusion, info);
    const std::string what = test::toString(c.kind) + " " + std::to_string(c.n) + ": " +
                             tws::toString(params);
    EXPECT_EQ(params.cluster, c.cluster) << what;
    EXPECT_EQ(params.chunk, c.chunk) << what;
    EXPECT_EQ(params.consumer_threads, c.threads) << what;
    EXPECT_EQ(params.vector, c.vector) << what;
  }
  // Few rows: one cluster per row.
  auto fusion = test::makeNormalization(Normalization::RmsNorm, DataType::BFloat16);
  EXPECT_EQ(tws::computeHeuristics(*fusion, infoFor(*fusion, Normalization::RmsNorm, 3, 262144))
                .clusters,
            3);
}

TEST(TmaWsNormalizationTest, RefusalsSayWhy) {
  const auto refusal = [](const Fusion& fusion, const SchedulerRuntimeInfo& info) {
    if (auto problem = tws::canScheduleCompileTime(fusion)) return *problem;
    return tws::canScheduleRunTime(fusion, info).value_or("");
  };
  auto softmax = test::makeNormalization(Normalization::Softmax, DataType::BFloat16);
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, Normalization::Softmax, 64, 4096)).find("inner_outer"),
            std::string::npos);
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, Normalization::Softmax, 64, 65537)).find("multiple of 8"),
            std::string::npos);
  driver::DeviceProperties ampere = driver::h100Properties();
  ampere.arch = driver::GpuArch{8, 0, false};
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, Normalization::Softmax, 64, 65536, ampere))
                .find("sm_90"),
            std::string::npos);
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, Normalization::Softmax, 4, 8 << 20)).find("8 CTAs"),
            std::string::npos);
  auto backward = test::makeNormalization(Normalization::LayerNormBackward, DataType::BFloat16);
  EXPECT_NE(refusal(*backward, infoFor(*backward, Normalization::LayerNormBackward, 64, 65536))
                .find("innermost dim alone"),
            std::string::npos);
  // A strided row input: the copy engine reads contiguous rows.
  SchedulerRuntimeInfo strided = infoFor(*softmax, Normalization::Softmax, 64, 65536);
  std::get<TensorArgumentInfo>(strided.arguments[0]).strides = {1, 64};
  EXPECT_NE(refusal(*softmax, strided).find("contiguous rows"), std::string::npos);
}

TEST(TmaWsNormalizationTest, ParamsRoundTrip) {
  tws::TmaWsNormalizationParams params;
  params.cluster = 4;
  params.chunk = 16384;
  params.clusters = 32;
  EXPECT_EQ(tws::decodeParams(tws::encodeParams(params)), params);
  EXPECT_EQ(tws::toString(params).rfind("tma_ws_normalization{cluster=4", 0), 0u)
      << tws::toString(params);
}

}  // namespace
}  // namespace braze
