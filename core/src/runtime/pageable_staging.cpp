// PageableStaging (runtime/pageable_staging.h).

#include "runtime/pageable_staging.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/pinned_host_memory.h"
#include "braze/driver/primary_context.h"

namespace braze::runtime_detail {
namespace {

// Smaller inputs go through the driver: starting threads would cost more than they save.
constexpr size_t kWorthStaging = size_t{4} << 20;
// Each thread copies this much at a time, so that one slice is spread over every thread and
// the slices finish in order.
constexpr size_t kChunkBytes = size_t{4} << 20;

}  // namespace

int PageableStaging::threads() {
  if (const char* text = std::getenv("BRAZE_HOST_COPY_THREADS")) {
    const int value = std::atoi(text);
    if (value > 0) return value;
  }
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

PageableStaging::PageableStaging(const ExecutionPlan& plan,
                                 const std::vector<FusionArgument>& arguments)
    : device_(plan.device) {
  // Copies between the device and a host input: to the device from it, or back into it.
  auto inputOf = [&](const ExecutionPlan::MemoryCopy& copy) -> const HostTensor* {
    const bool in = copy.direction == host::CopyDirection::HostToDevice &&
                    copy.source.kind == host::SlotKind::Input;
    const bool back = copy.direction == host::CopyDirection::DeviceToHost &&
                      copy.target.kind == host::SlotKind::Input;
    if (!(in || back) || copy.bytes == 0) return nullptr;
    const auto input = static_cast<size_t>((in ? copy.source : copy.target).index);
    return &std::get<HostTensor>(arguments[input]);
  };
  size_t total = 0;
  for (const ExecutionPlan::MemoryCopy& copy : plan.copies) {
    if (inputOf(copy) != nullptr) total += copy.bytes;
  }
  if (total < kWorthStaging) return;  // nothing allocated: source() and target() find nothing
  staged_.assign(plan.copies.size(), nullptr);
  targets_.assign(plan.copies.size(), nullptr);
  chunks_left_.assign(plan.copies.size(), 0);
  readers_.resize(plan.copies.size());
  landed_.assign(plan.copies.size(), nullptr);
  write_back_of_.resize(plan.copies.size());
  // Per input: its page-locked block, made on the first copy that reads or writes it; null for
  // inputs that are page-locked or not copied.
  std::vector<char*> block_of(arguments.size(), nullptr);
  std::vector<int8_t> pageable(arguments.size(), -1);  // -1: not asked yet
  for (size_t c = 0; c < plan.copies.size(); ++c) {
    const ExecutionPlan::MemoryCopy& copy = plan.copies[c];
    const HostTensor* tensor = inputOf(copy);
    if (tensor == nullptr) continue;
    const bool in = copy.direction == host::CopyDirection::HostToDevice;
    const auto input = static_cast<size_t>((in ? copy.source : copy.target).index);
    if (pageable[input] < 0) pageable[input] = driver::isPinnedHost(tensor->data()) ? 0 : 1;
    if (pageable[input] == 0) continue;
    if (block_of[input] == nullptr) {
      const auto bytes = static_cast<size_t>(tensor->numel() * sizeInBytes(tensor->dtype()));
      blocks_.push_back(driver::allocatePinnedHost(bytes));
      block_of[input] = static_cast<char*>(blocks_.back().get());
    }
    if (!in) {
      targets_[c] = block_of[input] + copy.target_offset;
      write_back_of_[c] = {c, targets_[c], static_cast<char*>(tensor->data()) + copy.target_offset,
                           copy.bytes};
      // Its bytes reach the pageable input only once every copy to the device reading them
      // has been staged (in order, those come before it).
      for (size_t r = 0; r < c; ++r) {
        const ExecutionPlan::MemoryCopy& reader = plan.copies[r];
        if (staged_[r] != nullptr && reader.source.index == copy.target.index &&
            reader.source_offset < copy.target_offset + copy.bytes &&
            copy.target_offset < reader.source_offset + reader.bytes)
          readers_[c].push_back(r);
      }
      BRAZE_CU(eventCreate, &landed_[c], CU_EVENT_DISABLE_TIMING);
      continue;
    }
    const auto* from = static_cast<const char*>(tensor->data()) + copy.source_offset;
    char* into = block_of[input] + copy.source_offset;
    staged_[c] = into;
    for (size_t done = 0; done < copy.bytes; done += kChunkBytes) {
      chunks_.push_back({c, from + done, into + done, std::min(kChunkBytes, copy.bytes - done)});
      ++chunks_left_[c];
    }
  }
  const auto count = static_cast<size_t>(threads());
  const bool writes_back =
      std::any_of(targets_.begin(), targets_.end(), [](const char* t) { return t != nullptr; });
  const size_t needed = writes_back ? count : std::min(count, chunks_.size());
  for (size_t t = 0; t < needed; ++t) workers_.emplace_back([this] { work(); });
}

PageableStaging::~PageableStaging() {
  join();
  for (CUevent event : landed_) {
    if (event != nullptr) driver::driverApi().eventDestroy(event);
  }
}

void PageableStaging::join() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  work_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void PageableStaging::finish() {
  join();
  if (failure_) std::rethrow_exception(failure_);
}

void PageableStaging::work() {
  bool context = false;
  while (true) {
    Chunk chunk;
    bool back = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [&] { return next_ < chunks_.size() || !write_backs_.empty() || closing_; });
      if (next_ < chunks_.size()) {
        chunk = chunks_[next_++];
      } else if (!write_backs_.empty()) {
        chunk = write_backs_.front();
        write_backs_.pop_front();
        back = true;
        // The copies to the device that read these bytes first.
        staged_one_.wait(lock, [&] {
          const std::vector<size_t>& readers = readers_[chunk.copy];
          return std::all_of(readers.begin(), readers.end(),
                             [&](size_t r) { return chunks_left_[r] == 0; });
        });
      } else {
        return;  // closing, nothing left
      }
    }
    if (back) {
      try {
        if (!context) driver::makePrimaryContextCurrent(device_);
        context = true;
        BRAZE_CU(eventSynchronize, landed_[chunk.copy]);
        std::memcpy(chunk.into, chunk.from, chunk.bytes);
      } catch (...) {
        // finish() rethrows it on the run's thread.
        std::lock_guard<std::mutex> lock(mutex_);
        if (!failure_) failure_ = std::current_exception();
      }
      continue;
    }
    std::memcpy(chunk.into, chunk.from, chunk.bytes);
    bool copy_done = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      copy_done = --chunks_left_[chunk.copy] == 0;
    }
    if (copy_done) staged_one_.notify_all();
  }
}

const char* PageableStaging::source(size_t copy) {
  if (copy >= staged_.size() || staged_[copy] == nullptr) return nullptr;
  std::unique_lock<std::mutex> lock(mutex_);
  staged_one_.wait(lock, [&] { return chunks_left_[copy] == 0; });
  return staged_[copy];
}

char* PageableStaging::target(size_t copy) const {
  return copy < targets_.size() ? targets_[copy] : nullptr;
}

void PageableStaging::copiedToHost(size_t copy, CUstream stream) {
  BRAZE_CU(eventRecord, landed_[copy], stream);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const Chunk& whole = write_back_of_[copy];
    for (size_t done = 0; done < whole.bytes; done += kChunkBytes) {
      write_backs_.push_back(
          {copy, whole.from + done, whole.into + done, std::min(kChunkBytes, whole.bytes - done)});
    }
  }
  work_.notify_all();
}

}  // namespace braze::runtime_detail
