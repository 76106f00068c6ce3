// Loading the driver at run time: without one, libbraze_core still loads and says why it cannot
// launch; with one, the API table is complete and its errors are readable.

#include <gtest/gtest.h>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "support/error_matchers.h"

namespace braze::driver {
namespace {

TEST(CudaDriverTest, AvailabilityAndReasonAgree) {
  std::string reason = "unchanged";
  const bool available = isDriverAvailable(&reason);
  EXPECT_EQ(available, reason.empty()) << reason;
  EXPECT_EQ(isDriverAvailable(), available);
  EXPECT_EQ(isDriverAvailable(nullptr), available);
}

TEST(CudaDriverTest, WithoutADriverTheReasonIsClear) {
  std::string reason;
  if (isDriverAvailable(&reason)) GTEST_SKIP() << "a CUDA driver and device are present";
  // Either libcuda is missing, or it is there and sees no device.
  const bool names_step = reason.find("libcuda.so.1") != std::string::npos ||
                          reason.find("cuInit") != std::string::npos ||
                          reason.find("no CUDA device") != std::string::npos;
  EXPECT_TRUE(names_step) << reason;
  EXPECT_NE(reason.find("; "), std::string::npos) << "the reason should say what to do: " << reason;
}

TEST(CudaDriverTest, WithoutADriverTheApiThrows) {
  std::string reason;
  if (isDriverAvailable(&reason)) GTEST_SKIP() << "a CUDA driver and device are present";
  EXPECT_TRUE(test::throwsError([] { driverApi(); }, {"no CUDA driver or device: ", reason}));
  int ignored = 0;
  EXPECT_TRUE(test::throwsError([&] { BRAZE_CU(driverGetVersion, &ignored); },
                                {"no CUDA driver or device: "}));
  EXPECT_EQ(deviceCount(), 0);
  EXPECT_TRUE(
      test::throwsError([] { makePrimaryContextCurrent(0); }, {"no CUDA driver or device: "}));
}

TEST(CudaDriverTest, EveryEntryPointIsResolved) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const DriverApi& api = driverApi();
  // The table is all function pointers; none may be left null.
  const auto* slots = reinterpret_cast<void* const*>(&api);
  for (size_t i = 0; i < sizeof(DriverApi) / sizeof(void*); ++i) {
    EXPECT_NE(slots[i], nullptr) << "entry " << i;
  }
  int version = 0;
  BRAZE_CU(driverGetVersion, &version);
  EXPECT_GE(version, 12000);
  EXPECT_GE(deviceCount(), 1);
}

TEST(CudaDriverTest, AFailedCallNamesTheCallAndTheError) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  EXPECT_TRUE(test::throwsError(
      [] { checkDriver(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", "while testing"); },
      {"cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (", "while testing"}));
  CUdevice device = 0;
  EXPECT_TRUE(test::throwsError([&] { BRAZE_CU(deviceGet, &device, 4096); },
                                {"cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE"}));
}

TEST(CudaDriverTest, PrimaryContextIsRetainedOnceAndMadeCurrent) {
  if (!isDriverAvailable()) GTEST_SKIP() << "no CUDA driver or device";
  const CUcontext context = makePrimaryContextCurrent(0);
  ASSERT_NE(context, nullptr);
  CUcontext current = nullptr;
  BRAZE_CU(ctxGetCurrent, &current);
  EXPECT_EQ(current, context);
  EXPECT_EQ(makePrimaryContextCurrent(0), context);
  EXPECT_TRUE(test::throwsError([] { makePrimaryContextCurrent(deviceCount()); },
                                {"does not exist", "CUDA_VISIBLE_DEVICES"}));
}

}  // namespace
}  // namespace braze::driver
