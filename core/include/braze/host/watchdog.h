#pragma once

// Watchdog: a thread that bounds how long enqueued GPU work may stay unfinished while the host
// does not wait for it. A caller that waits (Communicator::waitFor) bounds its own wait; a
// caller that returns at once (fd.execute of a sharded definition) hands its work here instead,
// so that a dead peer still ends in an error rather than in a stream that never drains.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace braze::host {

class Watchdog {
 public:
  /// One piece of watched work. Destroyed on the watchdog's thread once it is done or given up.
  class Work {
   public:
    virtual ~Work() = default;
    /// Done (true), still running (false), or failed: a non-empty `error` says how.
    virtual bool done(std::string& error) = 0;
    /// What the work is, for the message when it is not done in time ("allReduce of 1024
    /// float32 (sum)").
    virtual std::string describe() const = 0;
  };

  /// `expire(reason)` runs once, on the watchdog's thread, for the first work that failed or
  /// was still running `timeout` after watch(); `health()`, when given, runs each tick while
  /// work is pending and returns a non-empty reason to expire at once (an asynchronous error
  /// of the library behind the work). `thread_setup` runs first on the thread (makes a CUDA
  /// context current). The thread starts on the first watch().
  Watchdog(std::chrono::milliseconds timeout, std::function<void(const std::string&)> expire,
           std::function<std::string()> health = {}, std::function<void()> thread_setup = {},
           std::chrono::microseconds period = std::chrono::milliseconds(1));
  /// Stops the thread without waiting for pending work (it is dropped unchecked).
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Watches `work` from now. After the watchdog expired, `work` is dropped at once.
  void watch(std::unique_ptr<Work> work);
  /// Blocks until nothing is pending or the watchdog expired (bounded by the timeout).
  void drain();
  /// Whether expire() ran; its reason is failure().
  bool expired() const;
  std::string failure() const;
  /// Work watched and not yet found done.
  size_t pending() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::unique_ptr<Work> work;
    Clock::time_point deadline;
  };
  void loop();
  /// Polls the pending work in order; returns the reason to expire, or empty.
  std::string tick(std::unique_lock<std::mutex>& lock);

  const std::chrono::milliseconds timeout_;
  const std::chrono::microseconds period_;
  std::function<void(const std::string&)> expire_;
  std::function<std::string()> health_;
  std::function<void()> thread_setup_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;     ///< new work, or stop
  std::condition_variable drained_;  ///< the queue emptied, or expired
  std::deque<Entry> pending_;
  bool stop_ = false;
  bool expired_ = false;
  std::string failure_;
  std::thread thread_;
};

}  // namespace braze::host
