// The persistent kernel cache in one process: round trips, the content address, and files
// that must not be trusted (truncated, flipped, foreign, empty, huge, in the wrong place).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "braze/driver/nvrtc_compiler.h"
#include "braze/runtime/kernel_store.h"
#include "braze/serde/kernel_cache.h"

namespace braze::serde {
namespace {

namespace fs = std::filesystem;

// A kernel small enough to compile in tens of milliseconds; `scale` makes distinct sources.
std::string scaleSource(int scale) {
  return "extern \"C\" __global__ void scale" + std::to_string(scale) +
         "(float* out, const float* in, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) out[i] = in[i] * " +
         std::to_string(scale) + ".0f;\n}\n";
}

CompileOptions sm90Options() {
  CompileOptions options;
  options.arch = driver::GpuArch{9, 0};
  return options;
}

// One compile for the whole suite: NVRTC is the slow part.
const CompiledKernel& scaleKernel() {
  static const CompiledKernel kernel =
      CompiledKernel::compile(scaleSource(3), "scale3", sm90Options());
  return kernel;
}

std::string keyOf(const CompiledKernel& kernel) {
  return kernelKey(kernel.source(), kernel.kernelName(), kernel.nvrtcOptions(),
                   kernel.nvrtcVersion());
}

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("braze-kernel-cache-test-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(directory_ / "kernels", fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(directory_, ignored);
  }
  CacheOptions options() const {
    CacheOptions options;
    options.directory = directory_;
    options.log = &log_;
    return options;
  }
  static void writeFile(const fs::path& path, std::span<const uint8_t> bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }

  fs::path directory_;
  mutable std::ostringstream log_;
};

void expectSameKernel(const CompiledKernel& actual, const CompiledKernel& expected) {
  EXPECT_EQ(actual.source(), expected.source());
  EXPECT_EQ(actual.kernelName(), expected.kernelName());
  EXPECT_EQ(actual.arch(), expected.arch());
  EXPECT_EQ(actual.nvrtcOptions(), expected.nvrtcOptions());
  EXPECT_EQ(actual.cubin(), expected.cubin());
  EXPECT_EQ(actual.ptx(), expected.ptx());
  EXPECT_EQ(actual.compileLog(), expected.compileLog());
  EXPECT_EQ(actual.nvrtcVersion(), expected.nvrtcVersion());
  EXPECT_EQ(actual.resources().registers, expected.resources().registers);
  EXPECT_EQ(actual.resources().reported, expected.resources().reported);
  EXPECT_EQ(actual.resources().static_shared_memory_bytes,
            expected.resources().static_shared_memory_bytes);
}

TEST(KernelKeyTest, CoversSourceNameOptionsAndNvrtc) {
  const std::vector<std::string> options = {"--gpu-architecture=sm_90", "-minimal"};
  const std::string key = kernelKey("src", "k", options, {13, 0});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, kernelKey("src", "k", options, {13, 0}));
  EXPECT_NE(key, kernelKey("src ", "k", options, {13, 0}));
  EXPECT_NE(key, kernelKey("src", "k2", options, {13, 0}));
  EXPECT_NE(key, kernelKey("src", "k", {"--gpu-architecture=sm_100", "-minimal"}, {13, 0}));
  EXPECT_NE(key, kernelKey("src", "k", options, {13, 1}));
  // Length prefixes: moving a boundary between fields changes the key.
  EXPECT_NE(kernelKey("ab", "c", {}, {13, 0}), kernelKey("a", "bc", {}, {13, 0}));
}

TEST_F(KernelCacheTest, EncodedEntriesDecodeToTheSameKernel) {
  const CompiledKernel& kernel = scaleKernel();
  const std::vector<uint8_t> bytes = encodeKernelEntry(keyOf(kernel), kernel);
  DecodedKernelEntry decoded = decodeKernelEntry(bytes, keyOf(kernel));
  ASSERT_TRUE(decoded.kernel.has_value()) << decoded.problem;
  EXPECT_TRUE(decoded.kernel->fromStore());
  expectSameKernel(*decoded.kernel, kernel);
}

TEST_F(KernelCacheTest, ASecondCompileComesFromTheStoreWithoutNvrtc) {
  CompileOptions compile = sm90Options();
  compile.store = std::make_shared<KernelCache>(options());
  const int64_t before = driver::nvrtcCompileCount();
  const CompiledKernel first = CompiledKernel::compile(scaleSource(5), "scale5", compile);
  EXPECT_EQ(driver::nvrtcCompileCount(), before + 1);
  EXPECT_FALSE(first.fromStore());
  ASSERT_TRUE(fs::exists(directory_ / "kernels" / (keyOf(first) + ".bzk")));

  // Another cache object on the same folder: what the next process sees.
  compile.store = std::make_shared<KernelCache>(options());
  const CompiledKernel second = CompiledKernel::compile(scaleSource(5), "scale5", compile);
  EXPECT_EQ(driver::nvrtcCompileCount(), before + 1);
  EXPECT_TRUE(second.fromStore());
  expectSameKernel(second, first);
  const auto* cache = static_cast<KernelCache*>(compile.store.get());
  EXPECT_EQ(cache->counters().hits, 1);

  // Another architecture is another address: compiled, not found.
  CompileOptions sm100 = compile;
  sm100.arch = driver::GpuArch{10, 0};
  const CompiledKernel other = CompiledKernel::compile(scaleSource(5), "scale5", sm100);
  EXPECT_EQ(driver::nvrtcCompileCount(), before + 2);
  EXPECT_FALSE(other.fromStore());
  EXPECT_NE(keyOf(other), keyOf(first));
}

TEST_F(KernelCacheTest, EveryTruncationIsRefusedWithoutACrash) {
  const CompiledKernel& kernel = scaleKernel();
  const std::vector<uint8_t> bytes = encodeKernelEntry(keyOf(kernel), kernel);
  for (size_t size = 0; size < bytes.size(); ++size) {
    const DecodedKernelEntry decoded =
        decodeKernelEntry(std::span<const uint8_t>(bytes.data(), size), keyOf(kernel));
    ASSERT_FALSE(decoded.kernel.has_value()) << "truncated to " << size << " bytes";
    ASSERT_FALSE(decoded.problem.empty());
  }
}

TEST_F(KernelCacheTest, FlippedBitsAreRefusedOrChangeNothing) {
  const CompiledKernel& kernel = scaleKernel();
  const std::vector<uint8_t> bytes = encodeKernelEntry(keyOf(kernel), kernel);
  std::mt19937 random(7);
  int refused = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= static_cast<uint8_t>(1u << (random() % 8));
    const DecodedKernelEntry decoded = decodeKernelEntry(flipped, keyOf(kernel));
    if (!decoded.kernel) {
      ++refused;
      continue;
    }
    // A flip the checks let through (padding, an unused field) must not change the kernel.
    ASSERT_EQ(decoded.kernel->cubin(), kernel.cubin()) << "byte " << at;
    ASSERT_EQ(decoded.kernel->source(), kernel.source()) << "byte " << at;
    ASSERT_EQ(decoded.kernel->nvrtcOptions(), kernel.nvrtcOptions()) << "byte " << at;
    ASSERT_EQ(decoded.kernel->ptx(), kernel.ptx()) << "byte " << at;
    ASSERT_EQ(decoded.kernel->resources().registers, kernel.resources().registers);
  }
  EXPECT_GT(refused, static_cast<int>(bytes.size() * 9 / 10));
}

TEST_F(KernelCacheTest, ForeignEmptyAndOversizedFilesAreRefused) {
  const CompiledKernel& kernel = scaleKernel();
  std::vector<uint8_t> bytes = encodeKernelEntry(keyOf(kernel), kernel);
  EXPECT_EQ(decodeKernelEntry({}).problem, "the file is empty");
  std::vector<uint8_t> foreign = bytes;
  foreign[4] = 'X';  // the identifier sits at bytes 4..7
  EXPECT_NE(decodeKernelEntry(foreign).problem.find("identifier"), std::string::npos);
  // The entry of another key, stored under this one's name.
  EXPECT_NE(decodeKernelEntry(bytes, std::string(64, 'a')).problem.find("stored under"),
            std::string::npos);
  // A vector that claims more bytes than the file holds: the verifier bounds it.
  std::vector<uint8_t> huge = bytes;
  const std::string& source = kernel.source();
  auto at = std::search(huge.begin(), huge.end(), source.begin(), source.begin() + 16);
  ASSERT_NE(at, huge.end());
  const uint32_t claimed = 0x7fffffff;
  std::memcpy(&*(at - 4), &claimed, sizeof(claimed));  // the string's length prefix
  EXPECT_NE(decodeKernelEntry(huge).problem.find("verifier"), std::string::npos);

  KernelCache cache(options());
  // A file past the size cap is not read (a sparse file: no disk used).
  const fs::path big = cache.entryPath(std::string(64, 'b'));
  fs::create_directories(big.parent_path());
  { std::ofstream(big).put('x'); }
  fs::resize_file(big, static_cast<uintmax_t>(kMaxKernelEntryBytes) + 1);
  EXPECT_FALSE(cache.find(std::string(64, 'b')).has_value());
  EXPECT_NE(log_.str().find("larger than any entry"), std::string::npos);
  // A folder where the entry file should be.
  fs::create_directories(cache.entryPath(std::string(64, 'c')));
  EXPECT_FALSE(cache.find(std::string(64, 'c')).has_value());
  EXPECT_NE(log_.str().find("not a regular file"), std::string::npos);
  EXPECT_EQ(cache.counters().skipped, 2);
}

TEST_F(KernelCacheTest, ADamagedEntryIsSkippedCompiledAgainAndRewritten) {
  KernelCache* cache = nullptr;
  CompileOptions compile = sm90Options();
  auto store = std::make_shared<KernelCache>(options());
  cache = store.get();
  compile.store = store;
  const CompiledKernel first = CompiledKernel::compile(scaleSource(6), "scale6", compile);
  const fs::path path = cache->entryPath(keyOf(first));
  // Damage the middle of the file.
  std::vector<uint8_t> bytes(fs::file_size(path));
  std::ifstream(path, std::ios::binary)
      .read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(bytes.size() / 2);
  writeFile(path, bytes);

  const int64_t before = driver::nvrtcCompileCount();
  const CompiledKernel second = CompiledKernel::compile(scaleSource(6), "scale6", compile);
  EXPECT_EQ(driver::nvrtcCompileCount(), before + 1);  // a cold start for this kernel
  EXPECT_EQ(cache->counters().skipped, 1);
  EXPECT_NE(log_.str().find("skipping " + keyOf(first) + ".bzk"), std::string::npos) << log_.str();
  EXPECT_EQ(second.cubin(), first.cubin());
  // Rewritten: the next compile is a hit.
  const CompiledKernel third = CompiledKernel::compile(scaleSource(6), "scale6", compile);
  EXPECT_TRUE(third.fromStore());
  EXPECT_EQ(driver::nvrtcCompileCount(), before + 1);
}

TEST_F(KernelCacheTest, AFolderThatCannotBeWrittenOnlyCostsTheWrite) {
  // A file where the kernels folder should be: nothing can be created there.
  fs::create_directories(directory_);
  { std::ofstream(directory_ / "kernels") << "in the way"; }
  CompileOptions compile = sm90Options();
  auto cache = std::make_shared<KernelCache>(options());
  compile.store = cache;
  const CompiledKernel kernel = CompiledKernel::compile(scaleSource(7), "scale7", compile);
  EXPECT_FALSE(kernel.cubin().empty());
  EXPECT_EQ(cache->counters().write_failures, 1);
  EXPECT_NE(log_.str().find("cannot keep kernel scale7"), std::string::npos) << log_.str();
}

TEST_F(KernelCacheTest, AReadOnlyCacheStillServes) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes to read-only folders";
  CompileOptions compile = sm90Options();
  auto cache = std::make_shared<KernelCache>(options());
  compile.store = cache;
  const CompiledKernel first = CompiledKernel::compile(scaleSource(8), "scale8", compile);
  fs::permissions(directory_ / "kernels", fs::perms::owner_write | fs::perms::group_write,
                  fs::perm_options::remove);
  const CompiledKernel second = CompiledKernel::compile(scaleSource(8), "scale8", compile);
  EXPECT_TRUE(second.fromStore());
  const CompiledKernel other = CompiledKernel::compile(scaleSource(9), "scale9", compile);
  EXPECT_FALSE(other.fromStore());
  EXPECT_EQ(cache->counters().write_failures, 1);
}

TEST_F(KernelCacheTest, EntriesListsEveryFileWithItsValidity) {
  KernelCache cache(options());
  const CompiledKernel& kernel = scaleKernel();
  cache.insert(keyOf(kernel), kernel);
  writeFile(cache.entryPath(std::string(64, 'd')), std::vector<uint8_t>{1, 2, 3});
  const std::vector<KernelEntryInfo> entries = cache.entries();
  ASSERT_EQ(entries.size(), 2u);
  int valid = 0;
  for (const KernelEntryInfo& entry : entries) {
    if (entry.key == keyOf(kernel)) {
      EXPECT_TRUE(entry.valid) << entry.problem;
      EXPECT_EQ(entry.kernel_name, "scale3");
      EXPECT_EQ(entry.arch, "sm_90");
      EXPECT_EQ(entry.cubin_bytes, static_cast<int64_t>(kernel.cubin().size()));
      ++valid;
    } else {
      EXPECT_FALSE(entry.valid);
      EXPECT_FALSE(entry.problem.empty());
    }
  }
  EXPECT_EQ(valid, 1);
  EXPECT_EQ(cache.clear(), 2);
  EXPECT_TRUE(cache.entries().empty());
}

TEST_F(KernelCacheTest, PruningDropsTheLeastRecentlyUsedFirst) {
  CacheOptions small = options();
  KernelCache cache(small);
  std::vector<std::string> keys;
  const CompiledKernel& kernel = scaleKernel();
  const std::vector<uint8_t> bytes = encodeKernelEntry(keyOf(kernel), kernel);
  // Four files of one entry's size under distinct names, used in order 0, 1, 2, 3.
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 4; ++i) {
    keys.push_back(std::string(63, 'e') + static_cast<char>('0' + i));
    writeFile(cache.entryPath(keys.back()), bytes);
    fs::last_write_time(cache.entryPath(keys.back()), now - std::chrono::minutes(10 - i));
  }
  const auto entry_bytes = static_cast<int64_t>(bytes.size());
  EXPECT_EQ(cache.prune(4 * entry_bytes), 0);
  EXPECT_EQ(cache.prune(2 * entry_bytes + 1), 2);
  EXPECT_FALSE(fs::exists(cache.entryPath(keys[0])));
  EXPECT_FALSE(fs::exists(cache.entryPath(keys[1])));
  EXPECT_TRUE(fs::exists(cache.entryPath(keys[2])));
  EXPECT_TRUE(fs::exists(cache.entryPath(keys[3])));
}

TEST_F(KernelCacheTest, ABundleCarriesTheCacheAsOneFile) {
  KernelCache source(options());
  const CompiledKernel& kernel = scaleKernel();
  source.insert(keyOf(kernel), kernel);
  CompileOptions compile = sm90Options();
  compile.store = std::make_shared<KernelCache>(options());
  const CompiledKernel other = CompiledKernel::compile(scaleSource(11), "scale11", compile);
  writeFile(source.entryPath(std::string(64, 'f')), std::vector<uint8_t>{1, 2, 3});  // stale
  const fs::path bundle = directory_ / "cache.bzb";
  EXPECT_EQ(source.save(bundle), 2);

  CacheOptions elsewhere = options();
  elsewhere.directory = directory_ / "elsewhere";
  KernelCache target(elsewhere);
  const KernelCache::LoadReport report = target.load(bundle);
  EXPECT_EQ(report.added, 2);
  EXPECT_EQ(report.skipped, 0);
  EXPECT_TRUE(report.problems.empty());
  std::optional<CompiledKernel> found = target.find(keyOf(other));
  ASSERT_TRUE(found.has_value());
  expectSameKernel(*found, other);

  // Every truncation of the bundle adds nothing, or only whole valid entries.
  std::vector<uint8_t> bytes(fs::file_size(bundle));
  std::ifstream(bundle, std::ios::binary)
      .read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const fs::path damaged = directory_ / "damaged.bzb";
  for (size_t size = 0; size < bytes.size(); size += 97) {
    writeFile(damaged, std::span<const uint8_t>(bytes.data(), size));
    CacheOptions scratch = options();
    scratch.directory = directory_ / "scratch";
    KernelCache cache(scratch);
    const KernelCache::LoadReport truncated = cache.load(damaged);
    ASSERT_EQ(truncated.added, 0) << size;
    ASSERT_FALSE(truncated.problems.empty()) << size;
  }
  // A flipped byte inside an entry skips that entry alone, with its reason.
  std::vector<uint8_t> flipped = bytes;
  const std::string& source_text = other.source();
  auto at =
      std::search(flipped.begin(), flipped.end(), source_text.begin(), source_text.begin() + 40);
  ASSERT_NE(at, flipped.end());
  at[30] ^= 0x20;
  writeFile(damaged, flipped);
  CacheOptions scratch = options();
  scratch.directory = directory_ / "flipped";
  KernelCache cache(scratch);
  const KernelCache::LoadReport one_bad = cache.load(damaged);
  EXPECT_EQ(one_bad.added, 1);
  EXPECT_EQ(one_bad.skipped, 1);
  ASSERT_EQ(one_bad.problems.size(), 1u);
  EXPECT_NE(one_bad.problems[0].find("do not hash to its key"), std::string::npos)
      << one_bad.problems[0];
  // Not a bundle at all.
  EXPECT_NE(cache.load(source.entryPath(keyOf(kernel))).problems.at(0).find("'BRZB'"),
            std::string::npos);
  EXPECT_NE(cache.load(directory_).problems.at(0).find("not a readable file"), std::string::npos);
}

TEST(DefaultCacheDirectoryTest, FollowsBrazeCacheDirThenXdgThenHome) {
  const auto restore = [](const char* name, const char* value) {
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  };
  const char* saved_dir = std::getenv("BRAZE_CACHE_DIR");
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string dir = saved_dir ? saved_dir : "";
  const std::string xdg = saved_xdg ? saved_xdg : "";
  setenv("BRAZE_CACHE_DIR", "/tmp/braze-here", 1);
  EXPECT_EQ(defaultCacheDirectory(), fs::path("/tmp/braze-here"));
  setenv("BRAZE_CACHE_DIR", "off", 1);
  EXPECT_EQ(defaultCacheDirectory(), std::nullopt);
  unsetenv("BRAZE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(defaultCacheDirectory(), fs::path("/tmp/xdg/braze"));
  restore("BRAZE_CACHE_DIR", saved_dir ? dir.c_str() : nullptr);
  restore("XDG_CACHE_HOME", saved_xdg ? xdg.c_str() : nullptr);
}

}  // namespace
}  // namespace braze::serde
