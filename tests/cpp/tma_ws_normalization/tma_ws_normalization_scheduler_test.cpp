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
  auto shape =
      analyzeRowProgram(*test::makeNormalization(Normalization::LayerNorm, DataType::BFloat16));
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
        const tws::TmaWsNormalizationParams params = tws::computeHeuristics(*fusion, info);
        const BuiltKernel built = build(*fusion, params);
        const std::string what = test::toString(kind) + " " + std::string(toString(dtype)) + " " +
                                 std::to_string(n) + " " + tws::toString(params);
        EXPECT_EQ(built.compiled.resources().spill_store_bytes, 0) << what << "\n"
                                                                   << built.compiled.compileLog();
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
  // Rows split over the fewest CTAs that leave two or more per SM (256 threads each); one CTA of
  // 512 threads per SM only where two do not fit eight CTAs. Persistent grids of the clusters
  // resident at once: clusters of four and eight cover 120 of an H100's 132 SMs
  // (DeviceProperties::cluster_sms), of two all of them. Layer norm's two passes hold their
  // rows in registers: one CTA of 512 threads per SM, chunks of 16 KiB (fp32) per thread block.
  struct Case {
    Normalization kind;
    DataType dtype;
    int64_t n;
    int64_t cluster, chunk, threads, min_blocks, vector, clusters, register_rows;
  };
  for (const Case& c : std::vector<Case>{
           {Normalization::SoftmaxBackward, DataType::BFloat16, 65536, 4, 16384, 256, 3, 8, 90, 0},
           {Normalization::SoftmaxBackward, DataType::Float32, 65536, 8, 8192, 256, 3, 4, 45, 0},
           {Normalization::SoftmaxBackward, DataType::BFloat16, 262144, 8, 32768, 512, 1, 8, 15, 0},
           // 2 MiB of rows (dy and y in fp32): clusters of 16, which an H100 runs on 112 SMs.
           {Normalization::SoftmaxBackward, DataType::Float32, 262144, 16, 16384, 512, 1, 4, 7, 0},
           // Softmax's 2-byte rows whole in one CTA's registers (44 a thread), computed again.
           {Normalization::Softmax, DataType::BFloat16, 65536, 1, 65536, 768, 1, 8, 132, 1},
           {Normalization::Softmax, DataType::BFloat16, 262144, 8, 32768, 256, 3, 8, 45, 0},
           // Softmax's float rows in registers, the exponentials computed again in the outputs.
           {Normalization::Softmax, DataType::Float32, 65536, 2, 32768, 512, 1, 4, 66, 1},
           {Normalization::Softmax, DataType::Float32, 262144, 8, 32768, 512, 1, 4, 15, 1},
           // Weight and bias staged beside the rows.
           {Normalization::LayerNorm, DataType::Float32, 65536, 4, 16384, 512, 1, 4, 30, 1},
           {Normalization::LayerNorm, DataType::BFloat16, 262144, 8, 32768, 512, 1, 8, 15, 1},
       }) {
    auto fusion = test::makeNormalization(c.kind, c.dtype);
    const SchedulerRuntimeInfo info = infoFor(*fusion, c.kind, 1024, c.n);
    const tws::TmaWsNormalizationParams params = tws::computeHeuristics(*fusion, info);
    const std::string what =
        test::toString(c.kind) + " " + std::to_string(c.n) + ": " + tws::toString(params);
    EXPECT_EQ(params.cluster, c.cluster) << what;
    EXPECT_EQ(params.chunk, c.chunk) << what;
    EXPECT_EQ(params.consumer_threads, c.threads) << what;
    EXPECT_EQ(params.min_blocks_per_sm, c.min_blocks) << what;
    EXPECT_EQ(params.vector, c.vector) << what;
    EXPECT_EQ(params.clusters, c.clusters) << what;
    EXPECT_EQ(params.register_rows, c.register_rows) << what;
    EXPECT_EQ(params.recompute_operands,
              c.register_rows && c.kind == Normalization::Softmax ? 1 : 0)
        << what;
    EXPECT_EQ(params.stages, 1) << what;
    // Weights and biases of these dense runs are contiguous and aligned, and staged.
    EXPECT_EQ(params.contiguous_columns, 1) << what;
    EXPECT_EQ(params.staged_columns, c.kind == Normalization::LayerNorm ? 1 : 0) << what;
  }
  // Few rows: one cluster per row.
  auto fusion = test::makeNormalization(Normalization::SoftmaxBackward, DataType::BFloat16);
  EXPECT_EQ(
      tws::computeHeuristics(*fusion, infoFor(*fusion, Normalization::SoftmaxBackward, 3, 262144))
          .clusters,
      3);
  // Weights that do not fit beside rows of 1 MiB are read from L2 instead.
  auto rms = test::makeNormalization(Normalization::RmsNorm, DataType::Float32);
  EXPECT_EQ(tws::computeHeuristics(*rms, infoFor(*rms, Normalization::RmsNorm, 256, 262144))
                .staged_columns,
            0);
  // A smaller GPU: fewer SMs, fewer clusters.
  driver::DeviceProperties small = driver::h100Properties();
  small.sm_count = 36;
  small.cluster_sms = {};  // not measured: estimated from GPCs of 16 SMs of every 18
  EXPECT_EQ(tws::computeHeuristics(
                *fusion, infoFor(*fusion, Normalization::SoftmaxBackward, 1024, 65536, small))
                .clusters,
            2 * 12);
  // Less shared memory per CTA (100 KiB): softmax's float rows of 65536 held in registers on
  // clusters of four (64 KiB a CTA) instead of two (128 KiB).
  driver::DeviceProperties less_shared = driver::h100Properties();
  less_shared.max_shared_memory_per_block_optin = 100 * 1024;
  less_shared.shared_memory_per_sm = 100 * 1024;
  auto softmax32 = test::makeNormalization(Normalization::Softmax, DataType::Float32);
  const tws::TmaWsNormalizationParams four = tws::computeHeuristics(
      *softmax32, infoFor(*softmax32, Normalization::Softmax, 1024, 65536, less_shared));
  EXPECT_EQ(four.cluster, 4) << tws::toString(four);
  EXPECT_EQ(four.register_rows, 1) << tws::toString(four);
  EXPECT_EQ(four.recompute_operands, 1) << tws::toString(four);
}

TEST(TmaWsNormalizationTest, RefusalsSayWhy) {
  const auto refusal = [](const Fusion& fusion, const SchedulerRuntimeInfo& info) {
    if (auto problem = tws::canScheduleCompileTime(fusion)) return *problem;
    return tws::canScheduleRunTime(fusion, info).value_or("");
  };
  auto softmax = test::makeNormalization(Normalization::SoftmaxBackward, DataType::BFloat16);
  const Normalization kind = Normalization::SoftmaxBackward;
  EXPECT_EQ(refusal(*softmax, infoFor(*softmax, kind, 64, 65536)), "");
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, kind, 64, 4096)).find("inner_outer"),
            std::string::npos);
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, kind, 64, 65537)).find("multiple of 8"),
            std::string::npos);
  // What it measured slower on: several passes, weights; and bare row reductions. Softmax's
  // rows are taken from 128 KiB (65536 bf16), the least it takes at all.
  for (const Normalization slower : {Normalization::LayerNorm, Normalization::RmsNorm}) {
    auto fusion = test::makeNormalization(slower, DataType::BFloat16);
    EXPECT_NE(refusal(*fusion, infoFor(*fusion, slower, 64, 65536)).find("measured slower"),
              std::string::npos)
        << test::toString(slower) << ": " << refusal(*fusion, infoFor(*fusion, slower, 64, 65536));
  }
  // Rows in registers: layer norm and RMS norm from 256 KiB of 2-byte row inputs (not softmax,
  // whose exponentials make it issue-bound); float rows stay on inner_outer.
  auto layer_norm = test::makeNormalization(Normalization::LayerNorm, DataType::BFloat16);
  EXPECT_NE(refusal(*layer_norm, infoFor(*layer_norm, Normalization::LayerNorm, 64, 65536))
                .find("rows in registers pay from 262144 bytes"),
            std::string::npos);
  EXPECT_EQ(refusal(*layer_norm, infoFor(*layer_norm, Normalization::LayerNorm, 64, 262144)), "");
  auto rms32 = test::makeNormalization(Normalization::RmsNorm, DataType::Float32);
  for (const int64_t n : {int64_t{65536}, int64_t{262144}}) {
    EXPECT_NE(refusal(*rms32, infoFor(*rms32, Normalization::RmsNorm, 64, n))
                  .find("rows in registers pay for 2-byte rows only"),
              std::string::npos)
        << n;
  }
  auto softmax16 = test::makeNormalization(Normalization::Softmax, DataType::BFloat16);
  EXPECT_NE(refusal(*softmax16, infoFor(*softmax16, Normalization::Softmax, 64, 32768))
                .find("below 131072 braze::inner_outer holds rows in registers"),
            std::string::npos);
  EXPECT_EQ(refusal(*softmax16, infoFor(*softmax16, Normalization::Softmax, 64, 65536)), "");
  EXPECT_EQ(refusal(*softmax16, infoFor(*softmax16, Normalization::Softmax, 64, 262144)), "");
  driver::DeviceProperties ampere = driver::h100Properties();
  ampere.arch = driver::GpuArch{8, 0, false};
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, kind, 64, 65536, ampere)).find("sm_90"),
            std::string::npos);
  EXPECT_NE(refusal(*softmax, infoFor(*softmax, kind, 4, 8 << 20)).find("16 CTAs, the largest"),
            std::string::npos);
  // Clusters of 16 only where the device ran them: 2 MiB rows need them.
  auto softmax32_bwd = test::makeNormalization(kind, DataType::Float32);
  driver::DeviceProperties unmeasured = driver::h100Properties();
  unmeasured.cluster_sms = {};
  EXPECT_EQ(refusal(*softmax32_bwd, infoFor(*softmax32_bwd, kind, 64, 262144)), "");
  EXPECT_NE(refusal(*softmax32_bwd, infoFor(*softmax32_bwd, kind, 64, 262144, unmeasured))
                .find("does not fit the shared memory of 8 CTAs"),
            std::string::npos);
  // Norm backward rows below 32 KiB of row inputs: inner_outer's.
  auto short_rows = test::makeNormalization(Normalization::LayerNormBackward, DataType::BFloat16);
  EXPECT_NE(refusal(*short_rows, infoFor(*short_rows, Normalization::LayerNormBackward, 64, 4096))
                .find("below 32768"),
            std::string::npos);
  // nvFuser's layer norm backward sums [M, 1] values over their broadcast dim.
  auto nvfuser_style = test::makeNvfuserStyleLayerNormBackward(DataType::BFloat16);
  EXPECT_NE(
      refusal(*nvfuser_style, contiguousRuntimeInfo(
                                  *nvfuser_style, {{64, 4096}, {64, 4096}, {64}, {64, 1}, {4096}}))
          .find("does not reduce one dim"),
      std::string::npos)
      << refusal(*nvfuser_style,
                 contiguousRuntimeInfo(*nvfuser_style,
                                       {{64, 4096}, {64, 4096}, {64}, {64, 1}, {4096}}));
  Fusion row_sum;
  row_sum.addOutput(sum(makeSymbolicTensor(row_sum, 2, DataType::Float32), {1}));
  EXPECT_NE(refusal(row_sum, contiguousRuntimeInfo(row_sum, {{64, 65536}})).find("per-row results"),
            std::string::npos);
  // A strided row input: the copy engine reads contiguous rows.
  SchedulerRuntimeInfo strided = infoFor(*softmax, kind, 64, 65536);
  std::get<TensorArgumentInfo>(strided.arguments[0]).strides = {1, 64};
  EXPECT_NE(refusal(*softmax, strided).find("contiguous rows"), std::string::npos);
}

// Norm backward: the weight's (and bias's) gradients are column reductions. Whole rows per CTA
// in a ring of stages, the partials in registers, a cooperative grid.
TEST(TmaWsNormalizationTest, NormBackwardColumnSumsCompileWithoutSpills) {
  struct Case {
    Normalization kind;
    DataType dtype;
    int64_t n;
    int64_t cluster, threads, stages, min_blocks;
  };
  for (const Case& c : std::vector<Case>{
           // Whole rows in two stages; as many CTAs as the registers allow.
           {Normalization::LayerNormBackward, DataType::BFloat16, 16384, 1, 512, 2, 1},
           // 128 KiB rows and 64 KiB of weights: one stage of whole rows, not a cluster.
           {Normalization::LayerNormBackward, DataType::Float32, 16384, 1, 512, 1, 1},
           {Normalization::RmsNormBackward, DataType::BFloat16, 8192, 1, 256, 2, 2},
           // Three CTAs fit the registers, one stage each in shared memory.
           {Normalization::RmsNormBackward, DataType::Float32, 4096, 1, 256, 1, 3},
       }) {
    auto fusion = test::makeNormalization(c.kind, c.dtype);
    auto shape = analyzeRowProgram(*fusion);
    ASSERT_TRUE(std::holds_alternative<RowProgramShape>(shape)) << std::get<std::string>(shape);
    const bool layer_norm = c.kind == Normalization::LayerNormBackward;
    EXPECT_EQ(std::get<RowProgramShape>(shape).column_reductions, layer_norm ? 2 : 1);
    EXPECT_EQ(std::get<RowProgramShape>(shape).column_outputs.size(), layer_norm ? 2u : 1u);
    EXPECT_EQ(std::get<RowProgramShape>(shape).passes, 1);
    const SchedulerRuntimeInfo info = infoFor(*fusion, c.kind, 4096, c.n);
    EXPECT_EQ(tws::canScheduleRunTime(*fusion, info), std::nullopt);
    const tws::TmaWsNormalizationParams params = tws::computeHeuristics(*fusion, info);
    const std::string what = test::toString(c.kind) + " " + std::string(toString(c.dtype)) + " " +
                             std::to_string(c.n) + " " + tws::toString(params);
    EXPECT_EQ(params.cluster, c.cluster) << what;
    EXPECT_EQ(params.consumer_threads, c.threads) << what;
    EXPECT_EQ(params.stages, c.stages) << what;
    EXPECT_EQ(params.min_blocks_per_sm, c.min_blocks) << what;
    EXPECT_EQ(params.staged_columns, 1) << what;
    const BuiltKernel built = build(*fusion, params);
    EXPECT_TRUE(built.kernel.launch.cooperative) << what;
    EXPECT_EQ(std::count_if(built.kernel.parameters.begin(), built.kernel.parameters.end(),
                            [](const KernelParameter& p) {
                              return p.kind == KernelParameter::Kind::Workspace;
                            }),
              1)
        << what;
    EXPECT_EQ(built.compiled.resources().spill_store_bytes, 0) << what << "\n"
                                                               << built.compiled.compileLog();
    if (built.sass.empty()) continue;
    EXPECT_GE(test::countInstructions(built.sass, "UBLKCP.S.G"), 1) << what;
    EXPECT_GE(test::countInstructions(built.sass, "SYNCS.PHASECHK"), 1) << what;
    // bf16 outputs rounded two at a time: one pack per pair of dx; single conversions only for
    // the [N] gradients, four columns a lane in the final sums.
    if (c.dtype == DataType::BFloat16) {
      EXPECT_GE(test::countInstructions(built.sass, "F2FP.BF16.F32.PACK_AB"), 4) << what;
      EXPECT_LE(test::countInstructions(built.sass, "F2F.BF16.F32"), 4 * (layer_norm ? 2 : 1))
          << what;
    }
  }
}

// Norm backward plans on other devices: the grid is every resident CTA (a B200's 148 SMs); with
// half the shared memory per SM, rows of 16384 fp32 no longer fit one CTA and take a cluster.
TEST(TmaWsNormalizationTest, NormBackwardPlansOnOtherDevices) {
  auto fusion = test::makeNormalization(Normalization::LayerNormBackward, DataType::Float32);
  const auto plan = [&](const driver::DeviceProperties& device, int64_t n) {
    return tws::computeHeuristics(
        *fusion, infoFor(*fusion, Normalization::LayerNormBackward, 8192, n, device));
  };
  const tws::TmaWsNormalizationParams b200 = plan(driver::b200Properties(), 8192);
  EXPECT_EQ(b200.cluster, 1) << tws::toString(b200);
  EXPECT_EQ(b200.clusters, 148 * b200.min_blocks_per_sm) << tws::toString(b200);
  driver::DeviceProperties small = driver::h100Properties();
  small.sm_count = 36;
  small.cluster_sms = {};  // not measured: estimated from GPCs of 16 SMs of every 18
  small.shared_memory_per_sm = 100 * 1024;
  small.max_shared_memory_per_block_optin = 99 * 1024;
  const tws::TmaWsNormalizationParams whole = plan(driver::h100Properties(), 16384);
  const tws::TmaWsNormalizationParams split = plan(small, 16384);
  EXPECT_EQ(whole.cluster, 1) << tws::toString(whole);
  EXPECT_GT(split.cluster, 1) << tws::toString(split);
  EXPECT_LE(split.clusters * split.cluster, 36 * split.min_blocks_per_sm) << tws::toString(split);
  EXPECT_EQ(tws::canScheduleRunTime(
                *fusion, infoFor(*fusion, Normalization::LayerNormBackward, 8192, 16384, small)),
            std::nullopt);
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
