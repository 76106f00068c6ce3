// The multi-GPU tier: one process per GPU, started by tools/multigpu-test.sh NGPUS (or torchrun,
// mpirun, srun with this binary and --gtest_filter='MultiRankTest.*'). Each rank joins one NCCL
// communicator through the TCP store at MASTER_ADDR:MASTER_PORT, runs every shared sharded case
// on a mesh of all ranks with its parts on its GPU (and with four ranks a 2x2 mesh), and checks
// its parts of the outputs against the unsharded reference. Skipped when the process was not
// started as one of several ranks.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/nccl_library.h"
#include "braze/driver/primary_context.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/host/collectives.h"
#include "braze/host/communicator.h"
#include "braze/host/launch_environment.h"
#include "braze/host/store.h"
#include "braze/runtime/multidevice_executor.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/sharded_cases.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using namespace std::chrono_literals;

// Runs `c` on this rank with its parts on its GPU and checks them against the unsharded
// reference's parts.
void expectRankMatchesReference(test::ShardedCase& c, const host::LaunchEnvironment& launch,
                                host::Communicator& communicator,
                                host::NcclCollectives& collectives) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  MultiDeviceExecutor executor(*c.fusion, options);
  std::vector<FusionArgument> parts;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const auto* tv = executor.fusion().inputs()[i]->as<TensorView>();
    // A rank outside an input's mesh passes a stand-in of a part's sizes.
    const bool held = !tv->sharding() || tv->sharding()->mesh.has(launch.rank);
    const int64_t owner = held ? launch.rank : tv->sharding()->mesh.devices().front();
    parts.emplace_back(DeviceTensor::fromHost(shardOf(c.inputs[i], *tv, owner),
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
    if (tv->sharding() && !tv->sharding()->mesh.has(launch.rank)) {
      EXPECT_FALSE(std::get<DeviceTensor>(outputs[o]).defined()) << "output " << o;
      continue;  // another stage's
    }
    test::expectClose(std::get<DeviceTensor>(outputs[o]).toHost(),
                      shardOf(expected[o], *tv, launch.rank), c.tolerance);
  }
}

// This process's rank: its store, communicator and collectives, made on first use and kept
// until the process ends (never destroyed: the last test kills a rank, and a communicator's
// destruction would wait for it).
struct Rank {
  host::LaunchEnvironment launch;
  std::unique_ptr<host::TcpStore> store;
  std::unique_ptr<host::Communicator> communicator;
  std::unique_ptr<host::NcclCollectives> collectives;
};

// Null after a skip: started as one process, or without a GPU or NCCL.
Rank* thisRank() {
  static Rank* rank = []() -> Rank* {
    const host::LaunchEnvironment launch = host::readLaunchEnvironment();
    std::string why;
    if (launch.world_size < 2 || !driver::isDriverAvailable(&why) || !driver::ncclAvailable(&why) ||
        !launch.master_address || !launch.master_port)
      return nullptr;
    auto* made = new Rank;  // kept to the end of the process on purpose (see above)
    made->launch = launch;
    made->store = std::make_unique<host::TcpStore>(
        *made->launch.master_address, *made->launch.master_port, made->launch.rank == 0);
    made->communicator = std::make_unique<host::Communicator>(host::Communicator::create(
        made->launch, *made->store, static_cast<int>(made->launch.local_rank), {.timeout = 30s}));
    made->collectives = std::make_unique<host::NcclCollectives>(*made->communicator);
    return made;
  }();
  return rank;
}

TEST(MultiRankTest, EverySharedCaseMatchesTheReferenceOnEveryRank) {
  Rank* rank = thisRank();
  if (rank == nullptr)
    GTEST_SKIP() << "not one of several ranks with a GPU and NCCL; tools/multigpu-test.sh NGPUS "
                    "starts one process per GPU";
  const host::LaunchEnvironment& launch = rank->launch;
  host::Communicator& communicator = *rank->communicator;
  host::NcclCollectives& collectives = *rank->collectives;
  // Every case three times: allgathers by NCCL, by copy engines (the stream-pipelined cases'
  // allgathers then run beside their GEMMs without SMs), and by each as Auto picks (copy
  // engines for the steps of stream loops only).
  for (const host::AllgatherTransport transport :
       {host::AllgatherTransport::Nccl, host::AllgatherTransport::CopyEngines,
        host::AllgatherTransport::Auto}) {
    communicator.setAllgatherTransport(transport);
    const std::string by = transport == host::AllgatherTransport::Nccl          ? ", NCCL"
                           : transport == host::AllgatherTransport::CopyEngines ? ", copy engines"
                                                                                : ", auto";
    const int64_t by_copy_engines = communicator.copyEngineAllgathers();
    for (const std::string& name : test::shardedCaseNames()) {
      SCOPED_TRACE(name + " on rank " + std::to_string(launch.rank) + " of " +
                   std::to_string(launch.world_size) + by);
      test::ShardedCase c = test::makeShardedCase(name, launch.world_size);
      expectRankMatchesReference(c, launch, communicator, collectives);
    }
    // A 2-D mesh: each mesh dim's teams on communicators split off the whole one.
    if (launch.world_size == 4) {
      SCOPED_TRACE("2x2 mesh on rank " + std::to_string(launch.rank) + by);
      test::ShardedCase c = test::makeTwoByTwoCase();
      expectRankMatchesReference(c, launch, communicator, collectives);
    }
    // Two pipeline stages of half the ranks each: a send / receive between their meshes and,
    // with stages of two or more, each stage's allreduce on a communicator split off for its
    // mesh.
    if (launch.world_size % 2 == 0) {
      SCOPED_TRACE("two pipeline stages on rank " + std::to_string(launch.rank) + by);
      test::ShardedCase stages = test::makeTwoStageCase(launch.world_size / 2);
      expectRankMatchesReference(stages, launch, communicator, collectives);
    }
    // Stages on meshes of every rank, the second in reverse order: each rank sends its part to
    // one peer and receives another's in one group (a cycle on two ranks), and the middle rank
    // of an odd count keeps its part.
    if (launch.world_size >= 2) {
      SCOPED_TRACE("stages on shared devices, rank " + std::to_string(launch.rank) + by);
      std::vector<int64_t> ranks(static_cast<size_t>(launch.world_size));
      std::iota(ranks.begin(), ranks.end(), 0);
      const std::vector<int64_t> reversed(ranks.rbegin(), ranks.rend());
      test::ShardedCase shared = test::makeTwoStageCase(DeviceMesh(ranks), DeviceMesh(reversed));
      expectRankMatchesReference(shared, launch, communicator, collectives);
    }
    // Only NCCL moved nothing by copy engines: the shared cases include stream-pipelined
    // allgathers, which Auto gives to the copy engines.
    EXPECT_EQ(communicator.copyEngineAllgathers() > by_copy_engines,
              transport != host::AllgatherTransport::Nccl)
        << by;
  }
  // One host, GPUs that reach each other: the copy engines were used, not NCCL's fallback.
  EXPECT_EQ(communicator.copyEnginesRefusal(), "");
  communicator.setAllgatherTransport(host::AllgatherTransport::Nccl);
}

// Allgathers by copy engines of several sizes (the last larger than the first staging slots,
// which are set up again, larger), several in flight on two streams before any wait: slots are
// reused only once every peer has pulled them. Each rank's parts are random (seeded by rank
// and call, so every rank knows every part); results are poisoned before.
TEST(MultiRankTest, AllgatherByCopyEnginesGathersEveryRanksParts) {
  Rank* rank = thisRank();
  if (rank == nullptr) GTEST_SKIP() << "not one of several ranks";
  host::Communicator& communicator = *rank->communicator;
  const int device = static_cast<int>(rank->launch.local_rank);
  const int64_t n = rank->launch.world_size;
  communicator.setAllgatherTransport(host::AllgatherTransport::CopyEngines);
  driver::makePrimaryContextCurrent(device);
  CUstream streams[2] = {};
  for (CUstream& stream : streams) BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
  struct Call {
    DeviceTensor part;
    DeviceTensor gathered;
    HostTensor expected;
  };
  const std::vector<std::pair<DataType, int64_t>> sizes = {{DataType::Float32, 1},
                                                           {DataType::BFloat16, 1001},
                                                           {DataType::Float32, 262144},
                                                           {DataType::BFloat16, 1572867}};
  for (size_t s = 0; s < sizes.size(); ++s) {
    const auto [dtype, count] = sizes[s];
    SCOPED_TRACE(std::to_string(count) + " elements a rank");
    std::vector<Call> calls;
    for (int64_t call = 0; call < 5; ++call) {
      auto partOf = [&](int64_t r) {
        return test::RandomTensors(1000 * s + 10 * call + r).uniform(dtype, {count});
      };
      Call c;
      c.part = DeviceTensor::fromHost(partOf(rank->launch.rank), device);
      c.gathered = DeviceTensor::empty(dtype, {n * count}, device);
      c.expected = HostTensor::empty(dtype, {n * count});
      const size_t bytes = static_cast<size_t>(count * sizeInBytes(dtype));
      for (int64_t r = 0; r < n; ++r)
        std::memcpy(static_cast<char*>(c.expected.data()) + r * bytes, partOf(r).data(), bytes);
      CUstream stream = streams[call % 2];
      BRAZE_CU(memsetD8Async, c.gathered.data(), 0xff, n * bytes, stream);  // NaN
      communicator.allGather(c.part.data(), c.gathered.data(), static_cast<size_t>(count), dtype,
                             stream);
      calls.push_back(std::move(c));
    }
    for (CUstream stream : streams) communicator.waitFor(stream);
    for (size_t call = 0; call < calls.size(); ++call) {
      SCOPED_TRACE("call " + std::to_string(call));
      test::expectClose(calls[call].gathered.toHost(), calls[call].expected, test::Tolerance{});
    }
  }
  EXPECT_EQ(communicator.copyEnginesRefusal(), "");
  // Auto: an allgather alone goes by NCCL, one beside compute by copy engines; both gather.
  communicator.setAllgatherTransport(host::AllgatherTransport::Auto);
  for (const host::Overlap overlap : {host::Overlap::Alone, host::Overlap::BesideCompute}) {
    const bool beside = overlap == host::Overlap::BesideCompute;
    SCOPED_TRACE(beside ? "auto, beside compute" : "auto, alone");
    auto partOf = [&](int64_t r) {
      return test::RandomTensors(7000 + 10 * static_cast<int64_t>(beside) + r)
          .uniform(DataType::Float32, {4099});
    };
    const DeviceTensor part = DeviceTensor::fromHost(partOf(rank->launch.rank), device);
    const DeviceTensor gathered = DeviceTensor::empty(DataType::Float32, {n * 4099}, device);
    HostTensor expected = HostTensor::empty(DataType::Float32, {n * 4099});
    for (int64_t r = 0; r < n; ++r)
      std::memcpy(static_cast<float*>(expected.data()) + r * 4099, partOf(r).data(),
                  4099 * sizeof(float));
    gathered.fillBytes(0xff, streams[0]);
    const int64_t before = communicator.copyEngineAllgathers();
    communicator.allGather(part.data(), gathered.data(), 4099, DataType::Float32, streams[0],
                           overlap);
    communicator.waitFor(streams[0]);
    EXPECT_EQ(communicator.copyEngineAllgathers() - before, beside ? 1 : 0);
    test::expectClose(gathered.toHost(), expected, test::Tolerance{});
  }
  for (CUstream stream : streams) (void)driver::driverApi().streamDestroy(stream);
  communicator.setAllgatherTransport(host::AllgatherTransport::Nccl);
}

// Ends this process at once (no destructors: a communicator's would wait for a dead rank),
// with the summary line tools/multigpu-test.sh reads and the status of every test so far.
[[noreturn]] void leaveNow(const char* why) {
  const bool failed =
      ::testing::Test::HasFailure() || ::testing::UnitTest::GetInstance()->failed_test_count() > 0;
  std::printf("[  %s  ] %d tests, then left (%s)\n", failed ? "FAILED" : "PASSED",
              ::testing::UnitTest::GetInstance()->test_to_run_count(), why);
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(failed ? 1 : 0);
}

// Runs last: the last rank dies between two collectives, as a crashed process would. Every
// other rank's next collective fails within the communicator's timeout (or sooner, when NCCL
// sees the peer gone) with an error naming the rank and the collective, instead of hanging.
TEST(MultiRankTest, AKilledRankMakesEveryOtherRankRaise) {
  Rank* rank = thisRank();
  if (rank == nullptr) GTEST_SKIP() << "not one of several ranks";
  host::Communicator& communicator = *rank->communicator;
  const int device = static_cast<int>(rank->launch.local_rank);
  const DeviceTensor values =
      DeviceTensor::fromHost(test::RandomTensors(3).uniform(DataType::Float32, {1024}), device);
  CUstream stream = nullptr;
  communicator.allReduce(values.data(), values.data(), 1024, DataType::Float32, host::ReduceOp::Sum,
                         stream);
  // Rank 0 gathers by copy engines after the kill: the copies wait on signal words the dead
  // rank never writes, which NCCL's abort alone would not end. Set up while every rank lives.
  communicator.setAllgatherTransport(host::AllgatherTransport::CopyEngines);
  const DeviceTensor gathered =
      DeviceTensor::empty(DataType::Float32, {1024 * rank->launch.world_size}, device);
  communicator.allGather(values.data(), gathered.data(), 1024, DataType::Float32, stream);
  communicator.waitFor(stream);  // every rank is alive up to here
  if (rank->launch.rank == rank->launch.world_size - 1) leaveNow("killed as planned");
  const auto start = std::chrono::steady_clock::now();
  const std::string who = "rank " + std::to_string(rank->launch.rank) + " of " +
                          std::to_string(rank->launch.world_size);
  if (rank->launch.rank == 0) {
    // The path of a caller that does not wait (fd.execute): the watchdog aborts the
    // communicator, the stream drains (the copy engines' waits released), and the next call
    // throws.
    communicator.allGather(values.data(), gathered.data(), 1024, DataType::Float32, stream);
    communicator.allReduce(values.data(), values.data(), 1024, DataType::Float32,
                           host::ReduceOp::Sum, stream);
    communicator.watch(stream);
    (void)driver::driverApi().streamSynchronize(stream);
    EXPECT_TRUE(test::throwsError(
        [&] {
          communicator.allReduce(values.data(), values.data(), 1024, DataType::Float32,
                                 host::ReduceOp::Sum, stream);
        },
        {who, "aborted earlier", "allReduce of 1024 float32"}));
  } else {
    EXPECT_TRUE(test::throwsError(
        [&] {
          communicator.allReduce(values.data(), values.data(), 1024, DataType::Float32,
                                 host::ReduceOp::Sum, stream);
          communicator.waitFor(stream);
        },
        {who, "allReduce of 1024 float32", "The communicator was aborted"}));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s) << "the error came after the timeout";
  // The aborted communicator cannot be destroyed cleanly: leave without it.
  leaveNow("the others raised");
}

}  // namespace
}  // namespace braze
