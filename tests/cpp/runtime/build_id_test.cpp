#include "braze/runtime/build_id.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace braze {
namespace {

// The linker's build id of libbraze_core (GNU toolchains write one by default): hex, stable for
// the process.
TEST(CoreBuildIdTest, IsTheLibrarysGnuBuildId) {
  const std::string& id = coreBuildId();
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(&id, &coreBuildId());
  if (id.rfind("braze ", 0) == 0) GTEST_SKIP() << "libbraze_core was linked without a build id";
  EXPECT_GE(id.size(), 16u);
  EXPECT_TRUE(std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  })) << id;
}

}  // namespace
}  // namespace braze
