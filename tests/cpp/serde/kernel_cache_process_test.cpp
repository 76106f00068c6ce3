// The persistent kernel cache across processes: what one process compiles, the next runs
// without NVRTC, and eight processes filling one folder at once lose and tear nothing. Each
// process is braze_serde_cache_worker (worker/cache_worker.cpp), which runs the normalizations
// through FusionExecutorCache and checks every result against the reference evaluator.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "braze/serde/kernel_cache.h"
#include "child_process.h"

namespace braze::serde {
namespace {

namespace fs = std::filesystem;

using WorkerResult = test::ProcessResult;

std::string workerCommand() {
  return test::programPath("braze_serde_cache_worker", BRAZE_SERDE_CACHE_WORKER).string();
}

// Starts a worker on `directory` (stderr goes to the test's log), on its first `cases` cases
// (0: all).
FILE* startWorker(const fs::path& directory, const std::string& label, int cases = 0) {
  std::string command = workerCommand() + " '" + directory.string() + "' --label " + label;
  if (cases > 0) command += " --cases " + std::to_string(cases);
  return test::startProcess(command);
}

WorkerResult runWorker(const fs::path& directory, const std::string& label, int cases = 0) {
  return test::finishProcess(startWorker(directory, label, cases));
}

class KernelCacheProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("braze-kernel-cache-processes-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  fs::path directory_;
};

TEST_F(KernelCacheProcessTest, TheNextProcessRunsWithoutNvrtc) {
  const WorkerResult cold = runWorker(directory_, "cold");
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  EXPECT_GT(cold.counts.at("kernels"), 7);  // one per normalization, two for the long rows
  EXPECT_EQ(cold.counts.at("nvrtc_calls"), cold.counts.at("kernels"));
  EXPECT_EQ(cold.counts.at("from_store"), 0);
  EXPECT_EQ(cold.counts.at("writes"), cold.counts.at("kernels"));

  const WorkerResult warm = runWorker(directory_, "warm");
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_EQ(warm.counts.at("nvrtc_calls"), 0) << warm.output;
  EXPECT_EQ(warm.counts.at("from_store"), cold.counts.at("kernels"));
  EXPECT_EQ(warm.counts.at("hits"), cold.counts.at("kernels"));
  EXPECT_EQ(warm.counts.at("writes"), 0);
  // Nor segments, nor asks a scheduler anything, nor lowers: every runtime restored its
  // decisions and every kernel its recipe.
  EXPECT_EQ(cold.counts.at("runtimes_restored"), 0);
  EXPECT_GT(cold.counts.at("scheduler_calls"), 0);
  EXPECT_EQ(warm.counts.at("runtimes_restored"), warm.counts.at("runtimes")) << warm.output;
  EXPECT_EQ(warm.counts.at("scheduler_calls"), 0) << warm.output;
  EXPECT_EQ(warm.counts.at("from_recipes"), cold.counts.at("kernels")) << warm.output;
}

TEST_F(KernelCacheProcessTest, EightProcessesFillingOneFolderLoseAndTearNothing) {
  // Three kernels each, all eight writing the same three entries at once (kept few: the
  // sanitizer job runs this too).
  std::vector<FILE*> pipes;
  for (int i = 0; i < 8; ++i)
    pipes.push_back(startWorker(directory_, "writer" + std::to_string(i), /*cases=*/3));
  int64_t kernels = -1;
  for (FILE* pipe : pipes) {
    const WorkerResult result = test::finishProcess(pipe);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_EQ(result.counts.at("skipped"), 0) << result.output;  // never a torn entry
    kernels = result.counts.at("kernels");
  }
  CacheOptions options;
  options.directory = directory_;
  const std::vector<KernelEntryInfo> entries = KernelCache(options).entries();
  EXPECT_EQ(static_cast<int64_t>(entries.size()), kernels);
  for (const KernelEntryInfo& entry : entries) EXPECT_TRUE(entry.valid) << entry.problem;
  // No writer's temporary file is left behind.
  for (const fs::directory_entry& file : fs::directory_iterator(directory_ / "kernels"))
    EXPECT_EQ(file.path().extension(), ".bzk") << file.path();

  const WorkerResult after = runWorker(directory_, "after", /*cases=*/3);
  ASSERT_EQ(after.exit_code, 0) << after.output;
  EXPECT_EQ(after.counts.at("nvrtc_calls"), 0) << after.output;
}

// Ahead of time: the worker's fusions saved as definitions, `braze compile` builds their cache
// (as a machine without a GPU would, for sm_90), and the next process that defines the same
// fusions runs them asking no scheduler and calling NVRTC for nothing.
TEST_F(KernelCacheProcessTest, AnAheadOfTimeBuildServesTheNextProcess) {
  const fs::path definitions = directory_ / "definitions";
  const test::ProcessResult written =
      test::runProcess(workerCommand() + " --write-definitions '" + definitions.string() + "'");
  ASSERT_EQ(written.exit_code, 0) << written.output;
  int64_t kernels = 0;
  for (const fs::directory_entry& file : fs::directory_iterator(definitions)) {
    if (file.path().extension() != ".bzf") continue;
    fs::path signatures = file.path();
    signatures.replace_extension(".sig");
    const test::ProcessResult built = test::runProcess(
        test::programPath("braze", BRAZE_CLI).string() + " compile '" + file.path().string() +
        "' --arch sm_90 --dir '" + (directory_ / "cache").string() + "' --signatures '" +
        signatures.string() + "' 2>&1");
    ASSERT_EQ(built.exit_code, 0) << built.output;
    kernels += built.counts.at("kernels");
  }
  EXPECT_GE(kernels, 9);

  const WorkerResult warm = runWorker(directory_ / "cache", "aot");
  ASSERT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_EQ(warm.counts.at("nvrtc_calls"), 0) << warm.output;
  EXPECT_EQ(warm.counts.at("scheduler_calls"), 0) << warm.output;
  EXPECT_EQ(warm.counts.at("from_recipes"), kernels) << warm.output;
  EXPECT_EQ(warm.counts.at("runtimes_restored"), warm.counts.at("runtimes")) << warm.output;
  EXPECT_EQ(warm.counts.at("mismatches"), 0);
}

}  // namespace
}  // namespace braze::serde
