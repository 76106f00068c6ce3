#include "support/cache_reference_run.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "braze/braze.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"

namespace braze::test {

void poisonPool(size_t bytes, CUstream stream) {
  std::shared_ptr<driver::DeviceMemory> block =
      driver::DeviceMemory::allocateOnStream(0, bytes, stream);
  BRAZE_CU(memsetD8Async, block->pointer(), 0xFF, bytes, stream);
}

void expectCacheMatchesReference(FusionExecutorCache& cache, const std::vector<HostTensor>& inputs,
                                 const RunOptions& options, Tolerance (*tolerance)(DataType)) {
  std::vector<FusionArgument> arguments;
  size_t bytes = 0;
  for (const HostTensor& input : inputs) {
    arguments.emplace_back(DeviceTensor::fromHost(input));
    bytes += static_cast<size_t>(input.numel()) * sizeInBytes(input.dtype());
  }
  poisonPool(std::max<size_t>(bytes * 4, 1 << 20), options.stream);
  const std::vector<FusionArgument> outputs = cache.run(arguments, options);
  BRAZE_CU(streamSynchronize, options.stream);
  const std::vector<HostTensor> expected = evaluateFusionTensors(cache.fusion(), inputs);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const HostTensor actual = std::get<DeviceTensor>(outputs[i]).toHost();
    EXPECT_TRUE(isClose(actual, expected[i], tolerance(expected[i].dtype())))
        << "output " << i << "\n"
        << cache.lastRuntime()->describe();
  }
}

}  // namespace braze::test
