// Loading NCCL at run time: the search order, the version of the library found (skipped where
// none is installed), and the message naming every file tried when loading fails.

#include "braze/driver/nccl_library.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/error_matchers.h"

namespace braze::driver {
namespace {

using Variables = std::map<std::string, std::string>;

std::vector<std::string> candidatesFrom(const Variables& variables) {
  return ncclLibraryCandidates([&](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

TEST(NcclLibraryTest, SearchesTheLoaderTheToolkitThenTheWheels) {
  EXPECT_EQ(candidatesFrom({{"BRAZE_PYTHON_SITE_PACKAGES", "/venv/site-packages::/user/site"}}),
            (std::vector<std::string>{"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                      "/usr/local/cuda/lib/libnccl.so.2",
                                      "/venv/site-packages/nvidia/nccl/lib/libnccl.so.2",
                                      "/user/site/nvidia/nccl/lib/libnccl.so.2"}));
  EXPECT_EQ(candidatesFrom({}).size(), 3u);
}

TEST(NcclLibraryTest, AChosenLibraryIsTheOnlyCandidate) {
  EXPECT_EQ(candidatesFrom({{"BRAZE_NCCL_LIBRARY", "/opt/nccl/libnccl.so.2"},
                            {"BRAZE_PYTHON_SITE_PACKAGES", "/venv/site-packages"}}),
            (std::vector<std::string>{"/opt/nccl/libnccl.so.2"}));
  EXPECT_EQ(candidatesFrom({{"BRAZE_NCCL_LIBRARY", ""}}).size(), 3u);
}

TEST(NcclLibraryTest, AMissingChosenLibraryIsNamed) {
  const NcclLoadResult loaded = loadNcclLibrary(
      candidatesFrom({{"BRAZE_NCCL_LIBRARY", "/nonexistent/braze-test/libnccl.so.2"}}));
  EXPECT_NE(loaded.failure.find("cannot load libnccl.so.2; tried:\n  "
                                "/nonexistent/braze-test/libnccl.so.2: "),
            std::string::npos)
      << loaded.failure;
  EXPECT_NE(loaded.failure.find("No such file or directory"), std::string::npos) << loaded.failure;
  EXPECT_NE(loaded.failure.find("pip install nvidia-nccl-cu"), std::string::npos) << loaded.failure;
  EXPECT_NE(loaded.failure.find("set BRAZE_NCCL_LIBRARY to the path of a libnccl.so.2"),
            std::string::npos)
      << loaded.failure;
}

TEST(NcclLibraryTest, EveryFileTriedIsNamed) {
  const NcclLoadResult loaded =
      loadNcclLibrary({"/nonexistent/a/libnccl.so.2", "/nonexistent/b/libnccl.so.2"});
  EXPECT_NE(loaded.failure.find("\n  /nonexistent/a/libnccl.so.2: "), std::string::npos);
  EXPECT_NE(loaded.failure.find("\n  /nonexistent/b/libnccl.so.2: "), std::string::npos);
}

TEST(NcclLibraryTest, ALibraryThatIsNotNcclIsSkipped) {
  // libc loads but has no NCCL entry points; the next candidate is tried.
  const NcclLoadResult loaded = loadNcclLibrary({"libc.so.6", "/nonexistent/libnccl.so.2"});
  EXPECT_NE(loaded.failure.find("libc.so.6: it has no ncclGetVersion"), std::string::npos)
      << loaded.failure;
}

TEST(NcclLibraryTest, LoadsAndReportsItsVersion) {
  std::string why;
  if (!ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  const NcclApi& api = ncclApi();
  EXPECT_GE(api.version, 21000);
  EXPECT_FALSE(api.path.empty());
  int version = 0;
  ASSERT_EQ(api.getVersion(&version), NcclResult::Success);
  EXPECT_EQ(version, api.version);
  EXPECT_STREQ(api.getErrorString(NcclResult::Success), "no error");
}

TEST(NcclLibraryTest, LoadingTwiceFindsTheSameLibrary) {
  std::string why;
  if (!ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  const NcclLoadResult again = loadNcclLibrary({ncclApi().path});
  ASSERT_EQ(again.failure, "");
  EXPECT_EQ(again.api.version, ncclApi().version);
  EXPECT_EQ(again.api.allReduce, ncclApi().allReduce);
}

TEST(NcclLibraryTest, ErrorsNameTheCallAndNcclsDescription) {
  std::string why;
  if (!ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  EXPECT_NO_THROW(checkNccl(NcclResult::Success, "ncclAllReduce"));
  EXPECT_TRUE(test::throwsError(
      [] { checkNccl(NcclResult::InvalidArgument, "ncclAllReduce", nullptr, "on rank 3"); },
      {"ncclAllReduce failed: ", "invalid argument", "(ncclResult_t 4)", "on rank 3"}));
}

TEST(NcclLibraryTest, VersionStrings) {
  EXPECT_EQ(ncclVersionString(22809), "2.28.9");
  EXPECT_EQ(ncclVersionString(21003), "2.10.3");
  EXPECT_EQ(ncclVersionString(2708), "2.7.8");
}

}  // namespace
}  // namespace braze::driver
