// Device memory on a GPU (skipped without one), and the no-driver error otherwise.

#include <gtest/gtest.h>

#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "support/error_matchers.h"

namespace braze::driver {
namespace {

TEST(DeviceMemoryTest, WithoutADriverAllocationSaysWhy) {
  if (isDriverAvailable()) GTEST_SKIP() << "a CUDA driver and device are present";
  EXPECT_TRUE(
      test::throwsError([] { DeviceMemory::allocate(0, 1024); }, {"no CUDA driver or device: "}));
}

TEST(DeviceMemoryTest, ZeroBytesAllocateNothing) {
  // Needs no driver: nothing is allocated.
  const auto memory = DeviceMemory::allocate(0, 0);
  EXPECT_EQ(memory->pointer(), 0u);
  EXPECT_EQ(memory->bytes(), 0u);
}

TEST(DeviceMemoryTest, AllocatesWritableMemory) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const auto memory = DeviceMemory::allocate(0, 4096);
  ASSERT_NE(memory->pointer(), 0u);
  EXPECT_EQ(memory->pointer() % 256, 0u);
  std::vector<unsigned char> values(4096);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<unsigned char>(i * 7 + 3);
  BRAZE_CU(memcpyHtoD, memory->pointer(), values.data(), values.size());
  std::vector<unsigned char> back(values.size(), 0);
  BRAZE_CU(memcpyDtoH, back.data(), memory->pointer(), back.size());
  EXPECT_EQ(back, values);
}

TEST(DeviceMemoryTest, StreamOrderedMemoryIsUsableOnItsStream) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  CUstream stream = nullptr;
  BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  {
    const auto memory = DeviceMemory::allocateOnStream(0, 1 << 20, stream);
    ASSERT_NE(memory->pointer(), 0u);
    BRAZE_CU(memsetD8Async, memory->pointer(), 0x5A, 1 << 20, stream);
    BRAZE_CU(streamSynchronize, stream);
    std::vector<unsigned char> back(1 << 20, 0);
    BRAZE_CU(memcpyDtoH, back.data(), memory->pointer(), back.size());
    for (const unsigned char value : back) ASSERT_EQ(value, 0x5A);
  }
  BRAZE_CU(streamSynchronize, stream);
  BRAZE_CU(streamDestroy, stream);
}

TEST(DeviceMemoryTest, DefaultStreamBlocksAreReusedBySizeWithoutLosingData) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  CUdeviceptr first = 0;
  {
    const auto memory = DeviceMemory::allocateOnStream(0, 1000, nullptr);
    first = memory->pointer();
    ASSERT_NE(first, 0u);
    EXPECT_EQ(memory->bytes(), 1000u);
  }
  // The same rounded size on the default stream gets the kept block back...
  const auto again = DeviceMemory::allocateOnStream(0, 1024, nullptr);
  EXPECT_EQ(again->pointer(), first);
  // ...while it is in use, another request of that size gets another block...
  const auto other = DeviceMemory::allocateOnStream(0, 1000, nullptr);
  EXPECT_NE(other->pointer(), first);
  // ...and a block of another size is never handed out for it.
  const auto larger = DeviceMemory::allocateOnStream(0, 4096, nullptr);
  EXPECT_NE(larger->pointer(), first);
  EXPECT_NE(larger->pointer(), other->pointer());
  // A reused block is written and read back like a fresh one.
  std::vector<unsigned char> values(1024);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<unsigned char>(i * 5 + 1);
  BRAZE_CU(memcpyHtoD, again->pointer(), values.data(), values.size());
  std::vector<unsigned char> back(values.size(), 0);
  BRAZE_CU(memcpyDtoH, back.data(), again->pointer(), back.size());
  EXPECT_EQ(back, values);
}

TEST(DeviceMemoryTest, AnImpossibleAllocationNamesTheSizeAndDevice) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  // 1 PiB: more than any GPU has.
  EXPECT_TRUE(test::throwsError([] { DeviceMemory::allocate(0, size_t{1} << 50); },
                                {"cuMemAlloc failed", "1125899906842624 bytes on cuda:0"}));
}

}  // namespace
}  // namespace braze::driver
