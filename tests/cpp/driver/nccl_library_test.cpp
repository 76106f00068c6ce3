// Loading NCCL at run time: the search order, the version of the library found (skipped where
// none is installed), the message naming every file tried when loading fails, and the check
// that one NCCL is mapped before a handle made elsewhere is borrowed.

#include "braze/driver/nccl_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "support/error_matchers.h"

namespace braze::driver {
namespace {

using ::testing::HasSubstr;
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

// A handle made elsewhere in the process (a PyTorch group's) is usable only through the NCCL
// that made it: the one libnccl.so* mapped must be the one Braze calls.
TEST(NcclLibraryTest, OneMappedNcclThatBrazeCallsIsNoProblem) {
  const std::vector<std::string> mapped = {
      "/usr/lib/x86_64-linux-gnu/libc.so.6", "/venv/nvidia/nccl/lib/libnccl.so.2",
      // NCCL's own plugins are not copies of it.
      "/opt/plugins/libnccl-net.so", "/opt/plugins/libnccl-tuner-example.so",
      // The loader lists a file once; a list with it twice still holds one copy.
      "/venv/nvidia/nccl/lib/libnccl.so.2"};
  EXPECT_EQ(ncclCopiesProblem(mapped, "/venv/nvidia/nccl/lib/libnccl.so.2"), "");
}

TEST(NcclLibraryTest, ASecondMappedNcclIsRefusedNamingBoth) {
  const std::vector<std::string> mapped = {"/venv/nvidia/nccl/lib/libnccl.so.2",
                                           "/usr/local/cuda/lib/libnccl.so.2.28.9"};
  const std::string problem = ncclCopiesProblem(mapped, "/usr/local/cuda/lib/libnccl.so.2.28.9");
  EXPECT_THAT(problem, HasSubstr("this process maps 2 NCCL libraries "
                                 "(/venv/nvidia/nccl/lib/libnccl.so.2, "
                                 "/usr/local/cuda/lib/libnccl.so.2.28.9) and Braze calls "
                                 "/usr/local/cuda/lib/libnccl.so.2.28.9"));
  EXPECT_THAT(problem, HasSubstr("unset BRAZE_NCCL_LIBRARY, or set it to that file"));
}

TEST(NcclLibraryTest, BrazesNcclMissingFromTheMappedOnesIsRefused) {
  EXPECT_THAT(
      ncclCopiesProblem({"/venv/nvidia/nccl/lib/libnccl.so.2"}, "/opt/nccl/libnccl.so.2"),
      HasSubstr("Braze calls the NCCL in /opt/nccl/libnccl.so.2, which is not among the NCCL "
                "libraries mapped into this process (/venv/nvidia/nccl/lib/libnccl.so.2)"));
  EXPECT_THAT(ncclCopiesProblem({"/lib/libc.so.6"}, ""),
              HasSubstr("(file unknown), which is not among the NCCL libraries mapped into this "
                        "process (none)"));
}

TEST(NcclLibraryTest, TheLoadedNcclIsTheOneMappedCopy) {
  std::string why;
  if (!ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  const NcclApi& api = ncclApi();
  ASSERT_FALSE(api.file.empty());
  EXPECT_EQ(api.file.front(), '/') << api.file;
  const std::vector<std::string> mapped = mappedLibraries();
  EXPECT_NE(std::find(mapped.begin(), mapped.end(), api.file), mapped.end()) << api.file;
  EXPECT_EQ(ncclCopiesProblem(mapped, api.file), "");
  // In every NCCL 2.x: borrowing checks a handle with them.
  EXPECT_NE(api.commCount, nullptr);
  EXPECT_NE(api.commUserRank, nullptr);
  EXPECT_NE(api.commCuDevice, nullptr);
}

TEST(NcclLibraryTest, VersionStrings) {
  EXPECT_EQ(ncclVersionString(22809), "2.28.9");
  EXPECT_EQ(ncclVersionString(21003), "2.10.3");
  EXPECT_EQ(ncclVersionString(2708), "2.7.8");
}

}  // namespace
}  // namespace braze::driver
