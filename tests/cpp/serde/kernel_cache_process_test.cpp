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

namespace braze::serde {
namespace {

namespace fs = std::filesystem;

struct WorkerResult {
  int exit_code = -1;
  std::map<std::string, int64_t> counts;  // nvrtc_calls, kernels, from_store, ...
  std::string output;
};

// The worker beside this test binary (the build tree, or a bundle of binaries carried to a GPU
// machine), else where the build put it.
fs::path workerPath() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path beside = self.parent_path() / "braze_serde_cache_worker";
    if (fs::exists(beside)) return beside;
  }
  return BRAZE_SERDE_CACHE_WORKER;
}

// Starts a worker on `directory` (stderr goes to the test's log), on its first `cases` cases
// (0: all).
FILE* startWorker(const fs::path& directory, const std::string& label, int cases = 0) {
  std::string command = workerPath().string() + " '" + directory.string() + "' --label " + label;
  if (cases > 0) command += " --cases " + std::to_string(cases);
  return ::popen(command.c_str(), "r");
}

WorkerResult finishWorker(FILE* pipe) {
  WorkerResult result;
  std::array<char, 512> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream words(result.output);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos)
      result.counts[word.substr(0, eq)] = std::stoll(word.substr(eq + 1));
  }
  return result;
}

WorkerResult runWorker(const fs::path& directory, const std::string& label, int cases = 0) {
  return finishWorker(startWorker(directory, label, cases));
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
  // Nor segments, nor asks the schedulers' heuristics: every runtime restored its decisions.
  EXPECT_EQ(cold.counts.at("runtimes_restored"), 0);
  EXPECT_EQ(warm.counts.at("runtimes_restored"), warm.counts.at("runtimes")) << warm.output;
}

TEST_F(KernelCacheProcessTest, EightProcessesFillingOneFolderLoseAndTearNothing) {
  // Three kernels each, all eight writing the same three entries at once (kept few: the
  // sanitizer job runs this too).
  std::vector<FILE*> pipes;
  for (int i = 0; i < 8; ++i)
    pipes.push_back(startWorker(directory_, "writer" + std::to_string(i), /*cases=*/3));
  int64_t kernels = -1;
  for (FILE* pipe : pipes) {
    const WorkerResult result = finishWorker(pipe);
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

}  // namespace
}  // namespace braze::serde
