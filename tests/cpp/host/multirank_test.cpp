// The multi-GPU tier: one process per GPU, started by tools/multigpu-test.sh NGPUS (or torchrun,
// mpirun, srun with this binary and --gtest_filter='MultiRankTest.*'). Each rank joins one NCCL
// communicator through the TCP store at MASTER_ADDR:MASTER_PORT, runs every shared sharded case
// on a mesh of all ranks with its parts on its GPU, and checks its parts of the outputs against
// the unsharded reference. Skipped when the process was not started as one of several ranks.

#include <gtest/gtest.h>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/nccl_library.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/host/collectives.h"
#include "braze/host/communicator.h"
#include "braze/host/launch_environment.h"
#include "braze/host/store.h"
#include "braze/runtime/multidevice_executor.h"
#include "support/sharded_cases.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using namespace std::chrono_literals;

TEST(MultiRankTest, EverySharedCaseMatchesTheReferenceOnEveryRank) {
  const host::LaunchEnvironment launch = host::readLaunchEnvironment();
  if (launch.world_size < 2)
    GTEST_SKIP() << "started as one process (" << launch.launcher
                 << "); tools/multigpu-test.sh NGPUS starts one per GPU";
  std::string why;
  if (!driver::isDriverAvailable(&why)) GTEST_SKIP() << "no CUDA driver or device: " << why;
  if (!driver::ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  ASSERT_TRUE(launch.master_address && launch.master_port)
      << "rank " << launch.rank << ": set MASTER_ADDR and MASTER_PORT";
  host::TcpStore store(*launch.master_address, *launch.master_port, launch.rank == 0);
  host::Communicator communicator = host::Communicator::create(
      launch, store, static_cast<int>(launch.local_rank), {.timeout = 120s});
  host::NcclCollectives collectives(communicator);
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  for (const std::string& name : test::shardedCaseNames()) {
    SCOPED_TRACE(name + " on rank " + std::to_string(launch.rank) + " of " +
                 std::to_string(launch.world_size));
    test::ShardedCase c = test::makeShardedCase(name, launch.world_size);
    MultiDeviceExecutor executor(*c.fusion, options);
    std::vector<FusionArgument> parts;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const auto* tv = executor.fusion().inputs()[i]->as<TensorView>();
      parts.emplace_back(DeviceTensor::fromHost(shardOf(c.inputs[i], *tv, launch.rank),
                                                static_cast<int>(launch.local_rank)));
    }
    RunOptions run;
    run.device = static_cast<int>(launch.local_rank);
    const std::vector<FusionArgument> outputs = executor.run(parts, collectives, run);
    communicator.waitFor(run.stream);
    const std::vector<HostTensor> expected =
        evaluateFusionTensors(*test::unshardedCopy(*c.fusion), std::vector<HostTensor>(c.inputs));
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o) {
      const auto* tv = executor.fusion().outputs()[o]->as<TensorView>();
      test::expectClose(std::get<DeviceTensor>(outputs[o]).toHost(),
                        shardOf(expected[o], *tv, launch.rank), c.tolerance);
    }
  }
}

}  // namespace
}  // namespace braze
