// Fusion::setLaunchBounds: what a scheduler states about its kernel's blocks, kept by clone,
// with bad bounds refused where they are stated.

#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

std::unique_ptr<Fusion> makeRelu() {
  auto fusion = std::make_unique<Fusion>();
  fusion->addOutput(relu(makeSymbolicTensor(*fusion, 2)));
  return fusion;
}

TEST(LaunchBoundsTest, StatedBoundsAreKeptByClone) {
  auto fusion = makeRelu();
  EXPECT_FALSE(fusion->launchBounds().has_value());
  EXPECT_FALSE(fusion->clone()->launchBounds().has_value());
  fusion->setLaunchBounds(512, 2);
  ASSERT_TRUE(fusion->launchBounds().has_value());
  EXPECT_EQ(*fusion->launchBounds(), (LaunchBounds{512, 2}));
  EXPECT_EQ(fusion->clone()->launchBounds(), fusion->launchBounds());
  // Stating them again replaces them.
  fusion->setLaunchBounds(256);
  EXPECT_EQ(*fusion->launchBounds(), (LaunchBounds{256, 0}));
}

TEST(LaunchBoundsTest, BadBoundsAreRefused) {
  auto fusion = makeRelu();
  EXPECT_TRUE(test::throwsError([&] { fusion->setLaunchBounds(0, 1); },
                                {"setLaunchBounds(0, 1)", "1 to 1024 threads"}));
  EXPECT_TRUE(test::throwsError([&] { fusion->setLaunchBounds(2048, 1); },
                                {"setLaunchBounds(2048, 1)", "1 to 1024 threads"}));
  EXPECT_TRUE(test::throwsError([&] { fusion->setLaunchBounds(128, -1); },
                                {"setLaunchBounds(128, -1)", "blocks per SM"}));
  EXPECT_FALSE(fusion->launchBounds().has_value());
}

}  // namespace
}  // namespace braze
