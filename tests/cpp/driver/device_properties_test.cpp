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
  for (const char* text : {"",    "sm_",    "a",          "sm_a", "9",    "sm_9",    "-90",
                           "+90", "sm_-90", "9.",         ".0",   "9.0x", "9.-1",    "9.10",
                           "0.5", "sm_90b", "compute_90", "sm90", "9 0",  "sm_90aa", "123456"}) {
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

TEST(DevicePropertiesTest, ResidentClustersFromTheProbeOrAnEstimate) {
  // What an H200's driver reports: clusters of 4 and 8 cover 120 of 132 SMs.
  const DeviceProperties h100 = h100Properties();
  EXPECT_EQ(residentClusters(h100, 1, 2), 264);
  EXPECT_EQ(residentClusters(h100, 2, 1), 66);
  EXPECT_EQ(residentClusters(h100, 4, 1), 30);
  EXPECT_EQ(residentClusters(h100, 8, 1), 15);
  EXPECT_EQ(residentClusters(h100, 16, 1), 7);
  // Several CTAs per SM: a lower bound from the SMs one per SM covers (the driver: 92 of four).
  EXPECT_EQ(residentClusters(h100, 4, 3), 90);
  // Not probed: 16 of every 18 SMs for clusters of more than two.
  DeviceProperties unknown = h100;
  unknown.cluster_sms = {};
  EXPECT_EQ(residentClusters(unknown, 2, 1), 66);
  EXPECT_EQ(residentClusters(unknown, 4, 1), 28);
  EXPECT_EQ(residentClusters(unknown, 8, 2), 28);
  // A probe larger than the SM count (a table copied to a smaller device) is capped by it.
  DeviceProperties small = h100;
  small.sm_count = 36;
  EXPECT_EQ(residentClusters(small, 4, 1), 9);
  EXPECT_TRUE(test::throwsError([&] { residentClusters(h100, 3, 1); },
                                {"clusters of 3 CTAs", "a power of two up to 16"}));
}

TEST(DevicePropertiesTest, OnAHopperGpuClustersAreProbed) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const DeviceProperties& device = deviceProperties(0);
  if (device.arch.major < 9) GTEST_SKIP() << "no thread block clusters before sm_90";
  // One CTA per SM: clusters of one fill every SM, larger ones no more than smaller ones.
  EXPECT_EQ(device.cluster_sms[0], device.sm_count);
  for (size_t i = 1; i < device.cluster_sms.size(); ++i) {
    EXPECT_GT(device.cluster_sms[i], 0) << "clusters of " << (1 << i);
    EXPECT_LE(device.cluster_sms[i], device.cluster_sms[i - 1]) << "clusters of " << (1 << i);
  }
}

TEST(DevicePropertiesTest, AMissingDeviceIsNamed) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  EXPECT_TRUE(test::throwsError([] { deviceProperties(1000); },
                                {"CUDA device 1000 does not exist", "CUDA_VISIBLE_DEVICES"}));
}

}  // namespace
}  // namespace braze::driver
