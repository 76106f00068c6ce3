// Watchdog: pending work polled in order on a thread of its own, given up after a timeout.

#include "braze/host/watchdog.h"

#include <exception>

namespace braze::host {

Watchdog::Watchdog(std::chrono::milliseconds timeout,
                   std::function<void(const std::string&)> expire,
                   std::function<std::string()> health, std::function<void()> thread_setup,
                   std::chrono::microseconds period)
    : timeout_(timeout),
      period_(period),
      expire_(std::move(expire)),
      health_(std::move(health)),
      thread_setup_(std::move(thread_setup)) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::watch(std::unique_ptr<Work> work) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (expired_) return;  // dropped: nothing is watched after the first failure
  pending_.push_back({std::move(work), Clock::now() + timeout_});
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  lock.unlock();
  wake_.notify_one();
}

void Watchdog::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [&] { return pending_.empty() || expired_; });
}

bool Watchdog::expired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return expired_;
}

std::string Watchdog::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

size_t Watchdog::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

// Called with the lock held; polls without it (a poll may take the lock of whatever it
// watches). Only this thread pops entries, and the deque keeps references to its front valid
// while others push at the back.
std::string Watchdog::tick(std::unique_lock<std::mutex>& lock) {
  if (health_) {
    lock.unlock();
    std::string reason = health_();
    lock.lock();
    if (!reason.empty()) return reason;
  }
  while (!pending_.empty()) {
    Entry& front = pending_.front();
    std::string error;
    lock.unlock();
    const bool done = front.work->done(error);
    lock.lock();
    if (!error.empty()) return front.work->describe() + ": " + error;
    if (!done) {
      if (Clock::now() < front.deadline) return {};
      return front.work->describe() + " not finished after " + std::to_string(timeout_.count()) +
             " ms";
    }
    pending_.pop_front();
  }
  return {};
}

void Watchdog::loop() {
  std::string setup_failure;
  if (thread_setup_) {
    try {
      thread_setup_();
    } catch (const std::exception& error) {
      setup_failure = std::string("the watchdog could not start: ") + error.what();
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (pending_.empty()) {
      drained_.notify_all();
      wake_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      continue;
    }
    std::string reason = setup_failure.empty() ? tick(lock) : setup_failure;
    if (reason.empty()) {
      if (pending_.empty()) continue;
      wake_.wait_for(lock, period_, [&] { return stop_; });
      continue;
    }
    expired_ = true;
    failure_ = reason;
    std::deque<Entry> dropped = std::move(pending_);
    pending_.clear();
    lock.unlock();
    expire_(reason);
    dropped.clear();
    lock.lock();
    drained_.notify_all();
    // Nothing is watched after the first failure: wait to be stopped.
    wake_.wait(lock, [&] { return stop_; });
  }
}

}  // namespace braze::host
