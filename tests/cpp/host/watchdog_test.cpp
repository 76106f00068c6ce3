// The watchdog behind Communicator::watch, on the CPU: finished work retires without a
// failure; work still running past the timeout, work that reports an error, and an unhealthy
// library each expire it once with a reason naming the work; after that, new work is dropped.

#include "braze/host/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace braze::host {
namespace {

using namespace std::chrono_literals;

// Work whose state the test sets; counts its destruction.
class FakeWork : public Watchdog::Work {
 public:
  FakeWork(std::atomic<bool>& done, std::atomic<int>& destroyed, std::string error = {})
      : done_(done), destroyed_(destroyed), error_(std::move(error)) {}
  ~FakeWork() override { ++destroyed_; }
  bool done(std::string& error) override {
    error = error_;
    return done_.load();
  }
  std::string describe() const override { return "the fake allReduce"; }

 private:
  std::atomic<bool>& done_;
  std::atomic<int>& destroyed_;
  std::string error_;
};

// Waits up to `limit` for `condition`.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = 5s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

struct Expiries {
  std::atomic<int> count{0};
  std::string reason;
  std::function<void(const std::string&)> callback() {
    return [this](const std::string& why) {
      reason = why;
      ++count;
    };
  }
};

TEST(WatchdogTest, FinishedWorkRetiresWithoutExpiring) {
  Expiries expiries;
  std::atomic<bool> done{false};
  std::atomic<int> destroyed{0};
  Watchdog watchdog(100ms, expiries.callback());
  // Done before it is watched: no pause of this thread, however long, can make it expire.
  done = true;
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  watchdog.drain();
  EXPECT_EQ(watchdog.pending(), 0u);
  EXPECT_EQ(destroyed.load(), 2);
  std::this_thread::sleep_for(200ms);  // past the timeout: nothing is left to expire
  EXPECT_EQ(expiries.count.load(), 0);
  EXPECT_FALSE(watchdog.expired());
}

TEST(WatchdogTest, WorkRunningPastTheTimeoutExpiresItOnce) {
  Expiries expiries;
  std::atomic<bool> done{false};
  std::atomic<int> destroyed{0};
  Watchdog watchdog(50ms, expiries.callback());
  const auto start = std::chrono::steady_clock::now();
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  watchdog.drain();  // returns once expired
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 50ms);
  EXPECT_LT(waited, 2s);
  ASSERT_TRUE(eventually([&] { return expiries.count.load() == 1; }));
  EXPECT_EQ(expiries.reason, "the fake allReduce not finished after 50 ms");
  EXPECT_EQ(watchdog.failure(), expiries.reason);
  EXPECT_TRUE(eventually([&] { return destroyed.load() == 2; })) << "pending work is dropped";
  // Later work is dropped at once; the callback does not run again.
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  EXPECT_EQ(destroyed.load(), 3);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(expiries.count.load(), 1);
}

TEST(WatchdogTest, WorkReportingAnErrorExpiresItBeforeTheTimeout) {
  Expiries expiries;
  std::atomic<bool> done{false};
  std::atomic<int> destroyed{0};
  Watchdog watchdog(10min, expiries.callback());
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed, "its stream reports CUDA_ERROR_X"));
  ASSERT_TRUE(eventually([&] { return expiries.count.load() == 1; }));
  EXPECT_EQ(expiries.reason, "the fake allReduce: its stream reports CUDA_ERROR_X");
}

TEST(WatchdogTest, AnUnhealthyLibraryExpiresItWhileWorkIsPending) {
  Expiries expiries;
  std::atomic<bool> done{false};
  std::atomic<bool> broken{false};
  std::atomic<int> destroyed{0};
  Watchdog watchdog(10min, expiries.callback(),
                    [&]() -> std::string { return broken ? "NCCL reported a remote error" : ""; });
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(expiries.count.load(), 0);
  broken = true;
  ASSERT_TRUE(eventually([&] { return expiries.count.load() == 1; }));
  EXPECT_EQ(expiries.reason, "NCCL reported a remote error");
}

TEST(WatchdogTest, DestroyingItWithPendingWorkDoesNotWait) {
  Expiries expiries;
  std::atomic<bool> done{false};
  std::atomic<int> destroyed{0};
  const auto start = std::chrono::steady_clock::now();
  {
    Watchdog watchdog(10min, expiries.callback());
    watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_EQ(expiries.count.load(), 0);
}

TEST(WatchdogTest, AThreadSetupFailureExpiresItWithTheReason) {
  Expiries expiries;
  std::atomic<bool> done{true};
  std::atomic<int> destroyed{0};
  Watchdog watchdog(10min, expiries.callback(), {},
                    [] { throw std::runtime_error("no CUDA device 7"); });
  watchdog.watch(std::make_unique<FakeWork>(done, destroyed));
  ASSERT_TRUE(eventually([&] { return expiries.count.load() == 1; }));
  EXPECT_EQ(expiries.reason, "the watchdog could not start: no CUDA device 7");
}

}  // namespace
}  // namespace braze::host
