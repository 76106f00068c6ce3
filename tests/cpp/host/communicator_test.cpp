// The NCCL communicator. Without a GPU: creating one fails with a message (never a crash), a
// rank other than 0 gives up on the rendezvous after its timeout, and borrowing a null handle
// is refused. With a GPU (skipped otherwise): every collective of a one-rank communicator on
// random values, and through a borrowed handle (another owner's, as a PyTorch process group's
// would be); with two GPUs, two processes (this binary started again as rank 1) run the
// collectives against each other, then rank 0 alone finds its dead peer reported instead of
// hanging.

#include "braze/host/communicator.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/primary_context.h"
#include "support/error_matchers.h"

extern char** environ;

namespace braze::host {
namespace {

using namespace std::chrono_literals;
using driver::DeviceMemory;

// Where rank 0 serves the store, handed to the rank-1 process it starts.
constexpr char kChildPortVariable[] = "BRAZE_TEST_COMMUNICATOR_PORT";

LaunchEnvironment rankOf(int64_t rank, int64_t world_size) {
  LaunchEnvironment launch;
  launch.rank = rank;
  launch.world_size = world_size;
  launch.local_rank = rank;
  launch.launcher = "test";
  return launch;
}

TEST(CommunicatorTest, WithoutAGpuCreateSaysWhy) {
  if (driver::isDriverAvailable()) GTEST_SKIP() << "a CUDA driver and device are present";
  TcpStore store("127.0.0.1", 0, true);
  const char* why =
      driver::ncclAvailable() ? "no CUDA driver or device: " : "NCCL is not available";
  EXPECT_TRUE(
      test::throwsError([&] { Communicator::create(rankOf(0, 1), store, 0); },
                        {"rank 0 of 1 (CUDA device 0) cannot join the NCCL communicator: ", why}));
  // Rank 0 publishes no id for a communicator it cannot join.
  EXPECT_TRUE(test::throwsError([&] { store.get("braze/nccl_unique_id/0", 10ms); }, {"timed out"}));
}

TEST(CommunicatorTest, OtherRanksWaitForTheIdThenGiveUp) {
  std::string why;
  if (!driver::ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  TcpStore store("127.0.0.1", 0, true);
  // The generation of a second communicator on the same store.
  EXPECT_TRUE(test::throwsError(
      [&] { Communicator::create(rankOf(1, 2), store, 1, {.timeout = 100ms}); },
      {"rank 1 of 2 (CUDA device 1) cannot join the NCCL communicator: ",
       "timed out after 100 ms waiting for key 'braze/nccl_unique_id/0'", store.describe()}));
  EXPECT_TRUE(
      test::throwsError([&] { Communicator::create(rankOf(1, 2), store, 1, {.timeout = 10ms}); },
                        {"waiting for key 'braze/nccl_unique_id/1'"}));
}

TEST(CommunicatorTest, RankOutsideTheWorldIsRefused) {
  TcpStore store("127.0.0.1", 0, true);
  EXPECT_TRUE(test::throwsError(
      [&] { Communicator::create(rankOf(2, 2), store, 0); },
      {"cannot create a communicator for rank 2 of 2", "the rank must be in 0 .. world size - 1"}));
  EXPECT_TRUE(test::throwsError([&] { Communicator::create(rankOf(0, 1), store, -1); },
                                {"on CUDA device -1: device ordinals are 0 or more"}));
}

// Borrowing another owner's handle: what can be refused is, before NCCL is even loaded.
TEST(CommunicatorTest, BorrowRefusesANullHandleOrAnImpossibleRank) {
  EXPECT_TRUE(test::throwsError([] { Communicator::borrow(nullptr, 0, 1, 0, 0); },
                                {"cannot borrow a null NCCL communicator as rank 0 of 1 (CUDA "
                                 "device 0): its owner has not made it yet",
                                 "run a collective on the group first"}));
  // Never dereferenced: the rank is refused first.
  const auto not_a_handle = reinterpret_cast<driver::NcclComm>(uintptr_t{0x10});
  EXPECT_TRUE(test::throwsError(
      [&] { Communicator::borrow(not_a_handle, 2, 2, 0, 0); },
      {"cannot borrow an NCCL communicator as rank 2 of 2", "the rank must be in 0 .. size - 1"}));
  EXPECT_TRUE(test::throwsError([&] { Communicator::borrow(not_a_handle, 0, 1, 0, -1); },
                                {"(CUDA device -1)", "the device 0 or more"}));
}

// --- With a GPU ---------------------------------------------------------------------------

template <typename T>
std::vector<T> randomValues(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<T> values(count);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> distribution(-1, 1);
    for (T& value : values) value = distribution(engine);
  } else {
    std::uniform_int_distribution<int64_t> distribution(
        std::max<int64_t>(std::numeric_limits<T>::min(), -1000000),
        std::min<int64_t>(std::numeric_limits<T>::max(), 1000000));
    for (T& value : values) value = static_cast<T>(distribution(engine));
  }
  return values;
}

template <typename T>
std::shared_ptr<DeviceMemory> upload(int device, const std::vector<T>& values) {
  auto memory = DeviceMemory::allocate(device, values.size() * sizeof(T));
  BRAZE_CU(memcpyHtoD, memory->pointer(), values.data(), values.size() * sizeof(T));
  return memory;
}

// A buffer full of 0xFF bytes (NaN as float), so that an element never written shows.
std::shared_ptr<DeviceMemory> poisoned(int device, size_t bytes) {
  std::vector<unsigned char> poison(bytes, 0xff);
  return upload(device, poison);
}

template <typename T>
std::vector<T> download(const DeviceMemory& memory) {
  std::vector<T> values(memory.bytes() / sizeof(T));
  BRAZE_CU(memcpyDtoH, values.data(), memory.pointer(), memory.bytes());
  return values;
}

template <typename T>
std::vector<T> concatenated(std::vector<T> first, const std::vector<T>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

template <typename T>
std::vector<T> block(const std::vector<T>& values, size_t index, size_t count) {
  return {values.begin() + index * count, values.begin() + (index + 1) * count};
}

class CommunicatorGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver::isDriverAvailable(&why)) GTEST_SKIP() << "no CUDA driver or device: " << why;
    if (!driver::ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
  }

  // A stream that waits for the legacy default stream, where the synchronous copies run.
  static CUstream newStream(int device) {
    driver::makePrimaryContextCurrent(device);
    CUstream stream = nullptr;
    BRAZE_CU(streamCreate, &stream, CU_STREAM_DEFAULT);
    return stream;
  }
};

// A team split off the communicator (how a 2-D mesh's teams get theirs): on one rank, the team
// of rank 0 runs collectives on its own communicator; a rank in no team gets none; a team
// without this rank is refused before NCCL sees it.
TEST_F(CommunicatorGpuTest, ATeamSplitOffRunsItsOwnCollectives) {
  TcpStore store("127.0.0.1", 0, true);
  Communicator communicator = Communicator::create(rankOf(0, 1), store, 0, {.timeout = 60s});
  if (driver::ncclApi().commSplit == nullptr) GTEST_SKIP() << "this NCCL has no ncclCommSplit";
  std::optional<Communicator> team = communicator.split({0});
  ASSERT_TRUE(team.has_value());
  EXPECT_EQ(team->rank(), 0);
  EXPECT_EQ(team->size(), 1);
  const CUstream stream = newStream(0);
  const std::vector<float> values = randomValues<float>(300, 9);
  const auto send = upload(0, values);
  const auto recv = poisoned(0, values.size() * sizeof(float));
  team->allReduce(send->pointer(), recv->pointer(), values.size(), DataType::Float32, ReduceOp::Sum,
                  stream);
  team->waitFor(stream);
  EXPECT_EQ(download<float>(*recv), values);
  EXPECT_FALSE(communicator.split({}).has_value());
  EXPECT_TRUE(test::throwsError([&] { (void)communicator.split({1}); },
                                {"rank 0 of 1", "outside the communicator"}));
  (void)driver::driverApi().streamDestroy(stream);
}

// watch() returns at once; the watchdog retires finished work, and aborts the communicator
// when watched work runs past the timeout (here a host function holding the stream, standing
// for a collective whose peer died): the next call throws naming the last collective. The
// host function lets go after a while of its own, since NCCL's abort may wait for the stream.
TEST_F(CommunicatorGpuTest, WatchedWorkPastTheTimeoutAbortsTheCommunicator) {
  TcpStore store("127.0.0.1", 0, true);
  Communicator communicator = Communicator::create(rankOf(0, 1), store, 0, {.timeout = 300ms});
  const CUstream stream = newStream(0);
  const std::vector<float> values = randomValues<float>(1024, 11);
  const auto buffer = upload(0, values);
  communicator.allReduce(buffer->pointer(), buffer->pointer(), values.size(), DataType::Float32,
                         ReduceOp::Sum, stream);
  communicator.watch(stream);
  BRAZE_CU(streamSynchronize, stream);
  std::this_thread::sleep_for(600ms);  // twice the timeout: finished work never expires
  EXPECT_NO_THROW(communicator.checkHealth());
  EXPECT_EQ(download<float>(*buffer), values);

  communicator.allReduce(buffer->pointer(), buffer->pointer(), values.size(), DataType::Float32,
                         ReduceOp::Sum, stream);
  BRAZE_CU(streamSynchronize, stream);
  // Holds the stream for 1.5 s: five times the timeout.
  BRAZE_CU(
      launchHostFunc, stream, [](void*) { std::this_thread::sleep_for(1500ms); }, nullptr);
  const auto start = std::chrono::steady_clock::now();
  communicator.watch(stream);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 50ms) << "watch() does not wait";
  bool aborted = false;
  while (!aborted && std::chrono::steady_clock::now() - start < 20s) {
    std::this_thread::sleep_for(10ms);
    aborted = communicator.handle() == nullptr;
  }
  EXPECT_TRUE(aborted) << "the watchdog did not abort within 20 s";
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_TRUE(test::throwsError(
      [&] {
        communicator.allReduce(buffer->pointer(), buffer->pointer(), values.size(),
                               DataType::Float32, ReduceOp::Sum, stream);
      },
      {"aborted earlier", "rank 0 of 1 (CUDA device 0)", "allReduce of 1024 float32 (sum)",
       "not finished after 300 ms", "CommunicatorOptions::timeout"}));
  BRAZE_CU(streamSynchronize, stream);
  (void)driver::driverApi().streamDestroy(stream);
}

TEST_F(CommunicatorGpuTest, OneRankRunsEveryCollective) {
  TcpStore store("127.0.0.1", 0, true);
  Communicator communicator = Communicator::create(rankOf(0, 1), store, 0, {.timeout = 60s});
  EXPECT_EQ(communicator.rank(), 0);
  EXPECT_EQ(communicator.size(), 1);
  EXPECT_EQ(communicator.localRank(), 0);
  EXPECT_EQ(communicator.device(), 0);
  const CUstream stream = newStream(0);
  constexpr size_t n = 5000;
  const std::vector<float> values = randomValues<float>(n, 7);
  const auto send = upload(0, values);
  const size_t bytes = n * sizeof(float);

  for (ReduceOp op :
       {ReduceOp::Sum, ReduceOp::Product, ReduceOp::Max, ReduceOp::Min, ReduceOp::Average}) {
    const auto recv = poisoned(0, bytes);
    communicator.allReduce(send->pointer(), recv->pointer(), n, DataType::Float32, op, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*recv), values) << "allReduce, op " << static_cast<int>(op);
  }
  {
    const auto in_place = upload(0, values);
    communicator.allReduce(in_place->pointer(), in_place->pointer(), n, DataType::Float32,
                           ReduceOp::Sum, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*in_place), values) << "in-place allReduce";
  }
  {
    const std::vector<int64_t> integers = randomValues<int64_t>(n, 8);
    const auto integer_send = upload(0, integers);
    const auto recv = poisoned(0, n * sizeof(int64_t));
    communicator.allReduce(integer_send->pointer(), recv->pointer(), n, DataType::Int64,
                           ReduceOp::Max, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<int64_t>(*recv), integers) << "int64 allReduce";
  }
  {
    const auto recv = poisoned(0, bytes);
    communicator.allGather(send->pointer(), recv->pointer(), n, DataType::Float32, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*recv), values) << "allGather";
  }
  {
    const auto recv = poisoned(0, bytes);
    communicator.reduceScatter(send->pointer(), recv->pointer(), n, DataType::Float32,
                               ReduceOp::Sum, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*recv), values) << "reduceScatter";
  }
  {
    const auto recv = poisoned(0, bytes);
    communicator.broadcast(send->pointer(), recv->pointer(), n, DataType::Float32, 0, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*recv), values) << "broadcast";
  }
  {
    // bfloat16 moves as its 16-bit patterns, untouched.
    const std::vector<uint16_t> patterns = randomValues<uint16_t>(n, 9);
    const auto pattern_send = upload(0, patterns);
    const auto recv = poisoned(0, n * sizeof(uint16_t));
    communicator.allToAll(pattern_send->pointer(), recv->pointer(), n, DataType::BFloat16, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<uint16_t>(*recv), patterns) << "allToAll";
  }
  BRAZE_CU(streamDestroy, stream);
}

TEST_F(CommunicatorGpuTest, MistakesAreRefusedBeforeNcclSeesThem) {
  TcpStore store("127.0.0.1", 0, true);
  Communicator communicator = Communicator::create(rankOf(0, 1), store, 0);
  EXPECT_TRUE(test::throwsError(
      [&] { communicator.allReduce(0, 0, 1, DataType::Bool, ReduceOp::Sum, nullptr); },
      {"allReduce cannot reduce bool tensors", "int32 for bool"}));
  EXPECT_TRUE(test::throwsError(
      [&] { communicator.reduceScatter(0, 0, 1, DataType::Float8_e4m3fn, ReduceOp::Max, nullptr); },
      {"reduceScatter cannot reduce float8_e4m3fn tensors"}));
  EXPECT_TRUE(
      test::throwsError([&] { communicator.broadcast(0, 0, 1, DataType::Float32, 1, nullptr); },
                        {"broadcast from root 1: the communicator has ranks 0 .. 0"}));
  EXPECT_TRUE(test::throwsError([&] { communicator.send(0, 1, DataType::Float32, -1, nullptr); },
                                {"send to rank -1"}));
  // Still usable after refusals.
  EXPECT_NO_THROW(communicator.checkHealth());
  Communicator moved = std::move(communicator);
  EXPECT_NO_THROW(moved.checkHealth());
  EXPECT_TRUE(test::throwsError([&] { communicator.checkHealth(); }, {"moved from"}));
}

// A handle made elsewhere (here by a communicator of Braze's own, as a PyTorch process group
// would) runs collectives through a borrowed communicator; destroying that leaves the handle to
// its owner, which still works.
TEST_F(CommunicatorGpuTest, ABorrowedHandleRunsCollectivesAndStaysItsOwners) {
  TcpStore store("127.0.0.1", 0, true);
  Communicator owner = Communicator::create(rankOf(0, 1), store, 0, {.timeout = 60s});
  const CUstream stream = newStream(0);
  constexpr size_t n = 4096;
  const std::vector<float> values = randomValues<float>(n, 21);
  const auto send = upload(0, values);
  {
    Communicator borrowed = Communicator::borrow(owner.handle(), 0, 1, 0, 0, {.timeout = 60s});
    EXPECT_TRUE(borrowed.borrowed());
    EXPECT_FALSE(owner.borrowed());
    EXPECT_EQ(borrowed.handle(), owner.handle());
    EXPECT_EQ(borrowed.rank(), 0);
    EXPECT_EQ(borrowed.size(), 1);
    EXPECT_EQ(borrowed.device(), 0);
    const auto recv = poisoned(0, n * sizeof(float));
    borrowed.allReduce(send->pointer(), recv->pointer(), n, DataType::Float32, ReduceOp::Sum,
                       stream);
    borrowed.waitFor(stream);
    EXPECT_EQ(download<float>(*recv), values) << "allReduce through the borrowed communicator";
    // Handed to its watchdog, as fd.execute does; destruction waits for it.
    const auto gathered = poisoned(0, n * sizeof(float));
    borrowed.allGather(send->pointer(), gathered->pointer(), n, DataType::Float32, stream);
    borrowed.watch(stream);
    BRAZE_CU(streamSynchronize, stream);
    EXPECT_EQ(download<float>(*gathered), values) << "allGather through the borrowed communicator";
  }
  ASSERT_NE(owner.handle(), nullptr);
  EXPECT_NO_THROW(owner.checkHealth());
  const auto recv = poisoned(0, n * sizeof(float));
  owner.allReduce(send->pointer(), recv->pointer(), n, DataType::Float32, ReduceOp::Sum, stream);
  owner.waitFor(stream);
  EXPECT_EQ(download<float>(*recv), values) << "allReduce through the owner, after the borrow";
  BRAZE_CU(streamDestroy, stream);
}

// NCCL knows the handle's rank, size and device: a borrow that says otherwise is refused.
TEST_F(CommunicatorGpuTest, ABorrowThatMisstatesTheHandleIsRefused) {
  if (driver::ncclApi().commCount == nullptr || driver::ncclApi().commCuDevice == nullptr)
    GTEST_SKIP() << "this NCCL has no ncclCommCount or ncclCommCuDevice";
  TcpStore store("127.0.0.1", 0, true);
  Communicator owner = Communicator::create(rankOf(0, 1), store, 0, {.timeout = 60s});
  EXPECT_TRUE(test::throwsError(
      [&] { Communicator::borrow(owner.handle(), 1, 2, 1, 0); },
      {"cannot borrow the NCCL communicator as rank 1 of 2 (CUDA device 0): NCCL says it is "
       "rank 0 of 1",
       "pg.rank() and pg.size()"}));
  EXPECT_TRUE(test::throwsError([&] { Communicator::borrow(owner.handle(), 0, 1, 0, 3); },
                                {"as rank 0 of 1 (CUDA device 3): NCCL says it runs on CUDA "
                                 "device 0"}));
  EXPECT_NO_THROW(owner.checkHealth());
}

// A borrowed communicator whose watched work runs past the timeout stops using the handle and
// revokes it (a host function holding the stream stands for a collective whose peer died):
// the handle stays allocated, and its owner can still destroy it. Skipped where NCCL has no
// ncclCommRevoke (a borrowed handle is then aborted, which frees it under its owner).
TEST_F(CommunicatorGpuTest, ABorrowedCommunicatorRevokesOnFailureAndLeavesTheHandle) {
  if (driver::ncclApi().commRevoke == nullptr) GTEST_SKIP() << "this NCCL has no ncclCommRevoke";
  TcpStore store("127.0.0.1", 0, true);
  std::optional<Communicator> owner =
      Communicator::create(rankOf(0, 1), store, 0, {.timeout = 60s});
  const driver::NcclComm handle = owner->handle();
  Communicator borrowed = Communicator::borrow(handle, 0, 1, 0, 0, {.timeout = 300ms});
  const CUstream stream = newStream(0);
  BRAZE_CU(
      launchHostFunc, stream, [](void*) { std::this_thread::sleep_for(1500ms); }, nullptr);
  const auto start = std::chrono::steady_clock::now();
  borrowed.watch(stream);
  while (borrowed.handle() != nullptr && std::chrono::steady_clock::now() - start < 20s)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(borrowed.handle(), nullptr) << "the watchdog did not give up within 20 s";
  EXPECT_TRUE(test::throwsError(
      [&] { borrowed.checkHealth(); },
      {"aborted earlier", "not finished after 300 ms",
       "The borrowed communicator was revoked (ncclCommRevoke)", "destroy that group"}));
  BRAZE_CU(streamSynchronize, stream);
  // The owner still holds the handle, and destroys it (ncclCommDestroy) without a crash.
  EXPECT_EQ(owner->handle(), handle);
  owner.reset();
  (void)driver::driverApi().streamDestroy(stream);
}

// The two ranks' collectives; each rank checks its own results. Rank 1 uses device 1.
void runTwoRanks(Communicator& communicator, CUstream stream) {
  const int64_t rank = communicator.rank();
  const int device = communicator.device();
  constexpr size_t n = 3000;
  const std::vector<std::vector<float>> values = {randomValues<float>(2 * n, 100),
                                                  randomValues<float>(2 * n, 101)};
  const auto send = upload(device, values[rank]);
  const auto recv = [&](size_t count) { return poisoned(device, count * sizeof(float)); };
  {
    std::vector<float> sum(n);
    for (size_t i = 0; i < n; ++i) sum[i] = values[0][i] + values[1][i];
    const auto out = recv(n);
    communicator.allReduce(send->pointer(), out->pointer(), n, DataType::Float32, ReduceOp::Sum,
                           stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*out), sum) << "allReduce on rank " << rank;
  }
  {
    const auto out = recv(2 * n);
    communicator.allGather(send->pointer(), out->pointer(), n, DataType::Float32, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*out), concatenated(block(values[0], 0, n), block(values[1], 0, n)))
        << "allGather on rank " << rank;
  }
  {
    std::vector<float> sum(n);
    for (size_t i = 0; i < n; ++i) sum[i] = values[0][rank * n + i] + values[1][rank * n + i];
    const auto out = recv(n);
    communicator.reduceScatter(send->pointer(), out->pointer(), n, DataType::Float32, ReduceOp::Sum,
                               stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*out), sum) << "reduceScatter on rank " << rank;
  }
  {
    const auto out = recv(2 * n);
    communicator.broadcast(send->pointer(), out->pointer(), 2 * n, DataType::Float32, 1, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*out), values[1]) << "broadcast on rank " << rank;
  }
  {
    // Rank 0 sends first, then receives; rank 1 the other way round.
    const auto out = recv(n);
    const int64_t peer = 1 - rank;
    for (int step = 0; step < 2; ++step) {
      if ((step == 0) == (rank == 0)) {
        communicator.send(send->pointer(), n, DataType::Float32, peer, stream);
      } else {
        communicator.recv(out->pointer(), n, DataType::Float32, peer, stream);
      }
      communicator.waitFor(stream);
    }
    EXPECT_EQ(download<float>(*out), block(values[peer], 0, n)) << "recv on rank " << rank;
  }
  {
    const auto out = recv(2 * n);
    communicator.allToAll(send->pointer(), out->pointer(), n, DataType::Float32, stream);
    communicator.waitFor(stream);
    EXPECT_EQ(download<float>(*out),
              concatenated(block(values[0], rank, n), block(values[1], rank, n)))
        << "allToAll on rank " << rank;
  }
}

// Rank 1 of TwoProcessesRunEveryCollective, in a process of its own; skipped when run directly.
TEST_F(CommunicatorGpuTest, SecondRankOfTwoProcesses) {
  const char* port = std::getenv(kChildPortVariable);
  if (port == nullptr) GTEST_SKIP() << "runs as rank 1 of TwoProcessesRunEveryCollective only";
  TcpStore store("127.0.0.1", std::atoi(port), false, 60s);
  Communicator communicator = Communicator::create(rankOf(1, 2), store, 1, {.timeout = 60s});
  const CUstream stream = newStream(1);
  runTwoRanks(communicator, stream);
  // Rank 1 now dies without destroying its communicator (ncclCommDestroy would wait for rank
  // 0, which waits for this process to end): rank 0 checks how a collective fails without it.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
}

// Waits for `child` up to `limit`, then kills it: a hung rank fails the test instead of
// hanging it.
int waitOrKill(pid_t child, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ADD_FAILURE() << "rank 1 did not finish within " << limit.count() << " s; killed";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

TEST_F(CommunicatorGpuTest, TwoProcessesRunEveryCollective) {
  if (std::getenv(kChildPortVariable) != nullptr) GTEST_SKIP() << "this is the rank-1 process";
  if (driver::deviceCount() < 2) GTEST_SKIP() << "needs two GPUs: NCCL puts one rank on each";
  TcpStore store("127.0.0.1", 0, true);
  // Started afresh (not forked), so it opens the GPU in a process that has never used CUDA.
  const std::string filter = "--gtest_filter=CommunicatorGpuTest.SecondRankOfTwoProcesses";
  const std::string port = std::string(kChildPortVariable) + "=" + std::to_string(store.port());
  std::vector<char*> environment = {const_cast<char*>(port.c_str())};
  for (char** entry = environ; *entry != nullptr; ++entry) environment.push_back(*entry);
  environment.push_back(nullptr);
  char* arguments[] = {const_cast<char*>("/proc/self/exe"), const_cast<char*>(filter.c_str()),
                       nullptr};
  pid_t child = 0;
  ASSERT_EQ(
      ::posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, arguments, environment.data()), 0);
  {
    Communicator communicator = Communicator::create(rankOf(0, 2), store, 0, {.timeout = 15s});
    const CUstream stream = newStream(0);
    runTwoRanks(communicator, stream);
    const int status = waitOrKill(child, 90s);
    ASSERT_TRUE(status >= 0 && WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "rank 1's test failed; its output is above";

    // Rank 1 is gone: a collective waits for it in vain, and says so.
    const auto out = poisoned(0, 1000 * sizeof(float));
    EXPECT_TRUE(test::throwsError(
        [&] {
          communicator.allReduce(out->pointer(), out->pointer(), 1000, DataType::Float32,
                                 ReduceOp::Sum, stream);
          communicator.waitFor(stream);
        },
        {"rank 0 of 2 (CUDA device 0): allReduce of 1000 float32 (sum) failed: ",
         "The communicator was aborted"}));
    EXPECT_TRUE(test::throwsError([&] { communicator.checkHealth(); },
                                  {"this communicator was aborted earlier: rank 0 of 2"}));
    (void)driver::driverApi().streamDestroy(stream);
  }
}

}  // namespace
}  // namespace braze::host
