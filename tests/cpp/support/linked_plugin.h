#pragma once

// The scheduler table of the plugin library a test binary links against, for tests that call
// a scheduler through its C entry point the way the plugin host does.

#include <gtest/gtest.h>

#include <cstdint>

#include "braze/sdk/plugin_abi.h"

extern "C" const BrazePluginInfo* braze_plugin_info();

namespace braze::test {

/// The one scheduler the linked plugin declares, after checking its descriptor's size, ABI
/// major version, build tag and scheduler count (each a test failure when it differs).
inline const BrazeSchedulerInfo& linkedSchedulerTable() {
  const BrazePluginInfo* info = braze_plugin_info();
  EXPECT_EQ(info->struct_size, sizeof(BrazePluginInfo));
  EXPECT_EQ(info->abi.major, uint32_t{BRAZE_PLUGIN_ABI_MAJOR});
  EXPECT_STREQ(info->build_tag, BRAZE_BUILD_TAG);
  EXPECT_EQ(info->scheduler_count, 1u);
  return *info->schedulers[0];
}

}  // namespace braze::test
