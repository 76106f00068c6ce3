// `braze compile` (tools/braze/compile_command.cpp): a saved definition compiled ahead of time
// for a signature fills the cache folder so that a fresh process defining the same fusion runs
// that signature without NVRTC, segmentation or heuristics, and gets the reference results.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "braze/driver/nvrtc_compiler.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/serde/fusion_definition.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"
#include "child_process.h"
#include "support/normalization_fusions.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze::serde {
namespace {

namespace fs = std::filesystem;

test::ProcessResult runCli(const std::string& arguments) {
  return test::runProcess(test::programPath("braze", BRAZE_CLI).string() + " " + arguments +
                          " 2>&1");
}

std::string signatureOf(const std::vector<HostTensor>& inputs) {
  static const std::map<DataType, std::string> kShort = {
      {DataType::Float32, "f32"}, {DataType::BFloat16, "bf16"}, {DataType::Float16, "f16"}};
  std::string text;
  for (const HostTensor& tensor : inputs) {
    if (!text.empty()) text += "; ";
    text += kShort.at(tensor.dtype()) + "[";
    for (size_t d = 0; d < tensor.sizes().size(); ++d)
      text += (d ? "," : "") + std::to_string(tensor.sizes()[d]);
    text += "]";
  }
  return text;
}

class CompileCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braze-compile-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    setDefaultKernelStore(nullptr);
    setDefaultDecisionStore(nullptr);
    fs::remove_all(dir_);
  }

  // Saves `fusion`, compiles it for sm_90 with `braze compile`, then runs it in this process
  // from the cache: no NVRTC call, every kernel from the store, the runtime restored, results
  // as the reference evaluator's.
  void compileThenRun(const Fusion& fusion, const std::vector<HostTensor>& inputs,
                      int64_t expected_segments) {
    const fs::path definition = dir_ / "fusion.bzf";
    saveFusionDefinition(fusion, definition);
    const std::string signature = signatureOf(inputs);
    const test::ProcessResult cli =
        runCli("compile " + definition.string() + " --arch sm_90 --dir " +
               (dir_ / "cache").string() + " --signature '" + signature + "'");
    ASSERT_EQ(cli.exit_code, 0) << cli.output;
    EXPECT_NE(cli.output.find("segments=" + std::to_string(expected_segments)), std::string::npos)
        << cli.output;
    EXPECT_NE(cli.output.find("failed=0"), std::string::npos) << cli.output;

    CacheOptions options{.directory = dir_ / "cache"};
    setDefaultKernelStore(std::make_shared<KernelCache>(options));
    setDefaultDecisionStore(std::make_shared<RuntimeCache>(options));
    const std::unique_ptr<Fusion> loaded = loadFusionDefinition(definition);
    FusionExecutorCache executor(*loaded, {.registry = &test::shippedSchedulers()});
    RunOptions run_options;
    run_options.arch = driver::GpuArch{9, 0, false};
    const int64_t nvrtc_before = driver::nvrtcCompileCount();
    const std::vector<FusionArgument> outputs =
        executor.run(std::vector<FusionArgument>(inputs.begin(), inputs.end()), run_options);
    EXPECT_EQ(driver::nvrtcCompileCount(), nvrtc_before);
    const ExecutorCacheCounters counters = executor.counters();
    EXPECT_EQ(counters.kernels_compiled, expected_segments);
    EXPECT_EQ(counters.kernels_from_store, expected_segments);
    EXPECT_EQ(counters.runtimes_restored, 1);
    const std::vector<HostTensor> expected = evaluateFusionTensors(fusion, inputs);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      test::expectClose(std::get<HostTensor>(outputs[i]), expected[i]);
    }
  }

  fs::path dir_;
};

TEST_F(CompileCommandTest, PointwiseRunsFromTheCache) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* b = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(gelu(add(x, b), GeluApproximation::Tanh));
  const HostTensor x_value = HostTensor::full(DataType::Float32, {64, 128}, 0.5);
  const HostTensor b_value = HostTensor::full(DataType::Float32, {128}, -0.25);
  compileThenRun(fusion, {x_value, b_value}, 1);
}

TEST_F(CompileCommandTest, LayerNormForwardRunsFromTheCache) {
  const auto kind = test::Normalization::LayerNorm;
  compileThenRun(*test::makeNormalization(kind, DataType::BFloat16),
                 test::normalizationArguments(kind, DataType::BFloat16, 8, 1024, 3), 1);
}

TEST_F(CompileCommandTest, LayerNormBackwardRunsTwoKernelsFromTheCache) {
  const auto kind = test::Normalization::LayerNormBackward;
  // Rows of 2 MiB of row inputs: longer than any one kernel holds, so two segments.
  compileThenRun(*test::makeNormalization(kind, DataType::BFloat16),
                 test::normalizationArguments(kind, DataType::BFloat16, 4, 524288, 3), 2);
}

TEST_F(CompileCommandTest, BuildsForSm100) {
  Fusion fusion;
  // Rows with a pitch: the second signature's rows are 256 elements apart.
  TensorView* x = makeInputTensor(
      fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, true}});
  fusion.addOutput(mul(exp(x), 2.0));
  const fs::path definition = dir_ / "pointwise.bzf";
  saveFusionDefinition(fusion, definition);
  const fs::path signatures = dir_ / "signatures.txt";
  {
    std::ofstream out(signatures);
    out << "# two row pitches\nf32[64,128]\n\nf32[64,128]:[256,1]  # padded rows\n";
  }
  const test::ProcessResult cli =
      runCli("compile " + definition.string() + " --arch sm_100 --dir " +
             (dir_ / "cache").string() + " --signatures " + signatures.string());
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_NE(cli.output.find("signatures=2 failed=0"), std::string::npos) << cli.output;
  const std::vector<KernelEntryInfo> entries =
      KernelCache(CacheOptions{.directory = dir_ / "cache"}).entries();
  ASSERT_FALSE(entries.empty());
  for (const KernelEntryInfo& entry : entries) {
    EXPECT_TRUE(entry.valid) << entry.problem;
    EXPECT_EQ(entry.arch, "sm_100");
  }
  EXPECT_FALSE(fs::is_empty(dir_ / "cache" / "runtimes"));
}

TEST_F(CompileCommandTest, BadSignatureNamesTheSignatureAndInput) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(neg(x));
  const fs::path definition = dir_ / "neg.bzf";
  saveFusionDefinition(fusion, definition);
  const test::ProcessResult cli =
      runCli("compile " + definition.string() + " --arch sm_90 --dir " + (dir_ / "cache").string() +
             " --signature 'f32[4]'" + " --signature 'f32[4,4]; q8[2]'");
  EXPECT_EQ(cli.exit_code, 1) << cli.output;
  EXPECT_NE(cli.output.find("signature 1 \"f32[4]\": FAILED"), std::string::npos) << cli.output;
  EXPECT_NE(cli.output.find("input 1: unknown dtype 'q8'"), std::string::npos) << cli.output;
}

TEST_F(CompileCommandTest, UsageErrors) {
  EXPECT_EQ(runCli("compile --help").exit_code, 0);
  const test::ProcessResult no_arch = runCli("compile x.bzf --signature 'f32[1]'");
  EXPECT_EQ(no_arch.exit_code, 2);
  EXPECT_NE(no_arch.output.find("--arch is required"), std::string::npos) << no_arch.output;
  const test::ProcessResult bad_arch = runCli("compile x.bzf --arch sm_75 --signature 'f32[1]'");
  EXPECT_EQ(bad_arch.exit_code, 2);
  EXPECT_NE(bad_arch.output.find("use sm_90 or sm_100"), std::string::npos) << bad_arch.output;
  const test::ProcessResult missing =
      runCli("compile " + (dir_ / "none.bzf").string() + " --arch sm_90 --dir " + dir_.string() +
             " --signature 'f32[1]'");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("none.bzf"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace braze::serde
