// GpuArch's spelling and parsing, and the H100 properties heuristics use without a GPU.

#include <gtest/gtest.h>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_properties.h"
#include "support/error_matchers.h"

namespace braze::driver {
namespace {

TEST(GpuArchTest, ToStringNamesTheNvrtcTarget) {
  EXPECT_EQ((GpuArch{9, 0}).toString(), "sm_90");
  EXPECT_EQ((GpuArch{9, 0, true}).toString(), "sm_90a");
  EXPECT_EQ((GpuArch{10, 0, true}).toString(), "sm_100a");
  EXPECT_EQ((GpuArch{12, 0}).toString(), "sm_120");
  EXPECT_EQ((GpuArch{8, 6}).toString(), "sm_86");
}

TEST(GpuArchTest, ParsesEverySpelling) {
  EXPECT_EQ(GpuArch::parse("sm_90"), (GpuArch{9, 0, false}));
  EXPECT_EQ(GpuArch::parse("sm_90a"), (GpuArch{9, 0, true}));
  EXPECT_EQ(GpuArch::parse("sm_100a"), (GpuArch{10, 0, true}));
  EXPECT_EQ(GpuArch::parse("sm_120"), (GpuArch{12, 0, false}));
  EXPECT_EQ(GpuArch::parse("86"), (GpuArch{8, 6, false}));
  EXPECT_EQ(GpuArch::parse("100"), (GpuArch{10, 0, false}));
  EXPECT_EQ(GpuArch::parse("9.0"), (GpuArch{9, 0, false}));
  EXPECT_EQ(GpuArch::parse("10.3"), (GpuArch{10, 3, false}));
  EXPECT_EQ(GpuArch::parse("9.0a"), (GpuArch{9, 0, true}));
}

TEST(GpuArchTest, RoundTripsThroughToString) {
  for (const GpuArch arch : {GpuArch{7, 5}, GpuArch{8, 0}, GpuArch{8, 9}, GpuArch{9, 0, true},
                             GpuArch{10, 0}, GpuArch{12, 1, true}}) {
    EXPECT_EQ(GpuArch::parse(arch.toString()), arch) << arch.toString();
  }
}

TEST(GpuArchTest, RefusesMalformedText) {
  for (const char* text : {"", "sm_", "a", "sm_a", "9", "sm_9", "-90", "+90", "sm_-90", "9.", ".0",
                           "9.0x", "9.-1", "9.10", "0.5", "sm_90b", "compute_90", "sm90", "9 0",
                           "sm_90aa", "123456"}) {
    EXPECT_EQ(GpuArch::parse(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(DevicePropertiesTest, H100PropertiesAreTheDatasheet) {
  const DeviceProperties h100 = h100Properties();
  EXPECT_EQ(h100.arch, (GpuArch{9, 0}));
  EXPECT_EQ(h100.sm_count, 132);
  EXPECT_EQ(h100.max_shared_memory_per_block, 48 * 1024);
  EXPECT_EQ(h100.max_shared_memory_per_block_optin, 227 * 1024);
  EXPECT_EQ(h100.warp_size, 32);
  EXPECT_EQ(h100.l2_cache_bytes, 50 * 1024 * 1024);
}

TEST(DevicePropertiesTest, WithoutADriverTheErrorSaysSo) {
  if (isDriverAvailable()) GTEST_SKIP() << "a CUDA driver and device are present";
  EXPECT_TRUE(test::throwsError([] { deviceProperties(0); }, {"no CUDA driver or device: "}));
}

TEST(DevicePropertiesTest, OnAGpuTheyAreRead) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const DeviceProperties& device = deviceProperties(0);
  EXPECT_FALSE(device.name.empty());
  EXPECT_GE(device.arch.major, 7);
  EXPECT_GT(device.sm_count, 0);
  EXPECT_EQ(device.warp_size, 32);
  EXPECT_GE(device.max_threads_per_block, 1024);
  EXPECT_GE(device.max_shared_memory_per_block_optin, device.max_shared_memory_per_block);
  EXPECT_GT(device.global_memory_bytes, int64_t{1} << 30);
  EXPECT_GE(device.driver_version, 12000);
  // Cached: the same object each time.
  EXPECT_EQ(&deviceProperties(0), &device);
}

TEST(DevicePropertiesTest, AMissingDeviceIsNamed) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  EXPECT_TRUE(test::throwsError([] { deviceProperties(1000); },
                                {"CUDA device 1000 does not exist", "CUDA_VISIBLE_DEVICES"}));
}

}  // namespace
}  // namespace braze::driver
