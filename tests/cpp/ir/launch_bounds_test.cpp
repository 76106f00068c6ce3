// Fusion::setLaunchBounds and Fusion::assumeExtent: what a scheduler states about its kernel's
// blocks and the sizes it was made for, kept by clone, with bad statements refused where they
// are made.

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

TEST(LaunchBoundsTest, AssumedExtentsAreKeptByCloneAndRestatedInPlace) {
  auto fusion = makeRelu();
  auto* x = fusion->inputs()[0]->as<TensorView>();
  Scalar* row = x->logical()[1]->extent();
  fusion->assumeExtent(row, 4096);
  fusion->assumeExtent(row, 1024);  // replaces
  ASSERT_EQ(fusion->assumedExtents().size(), 1u);
  EXPECT_EQ(fusion->assumedExtents()[0].second, 1024);
  CloneMap map;
  const auto copy = fusion->clone(&map);
  ASSERT_EQ(copy->assumedExtents().size(), 1u);
  EXPECT_EQ(copy->assumedExtents()[0].first, map[row]);
  EXPECT_EQ(copy->assumedExtents()[0].second, 1024);
}

TEST(LaunchBoundsTest, BadAssumedExtentsAreRefused) {
  auto fusion = makeRelu();
  auto* x = fusion->inputs()[0]->as<TensorView>();
  EXPECT_TRUE(test::throwsError([&] { fusion->assumeExtent(x->logical()[1]->extent(), 0); },
                                {"assumeExtent", "at least 1"}));
  EXPECT_TRUE(test::throwsError([&] { fusion->assumeExtent(fusion->constantIndex(8), 8); },
                                {"assumeExtent", "already the constant 8"}));
  Fusion other;
  Scalar* foreign = makeSymbolicTensor(other, 1)->logical()[0]->extent();
  EXPECT_TRUE(test::throwsError([&] { fusion->assumeExtent(foreign, 8); },
                                {"assumeExtent", "scalar of this fusion"}));
  EXPECT_TRUE(fusion->assumedExtents().empty());
}

}  // namespace
}  // namespace braze
