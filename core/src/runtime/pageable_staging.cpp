// PageableStaging (runtime/pageable_staging.h).

#include "runtime/pageable_staging.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "braze/driver/pinned_host_memory.h"

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
                                 const std::vector<FusionArgument>& arguments) {
  size_t total = 0;
  for (const ExecutionPlan::MemoryCopy& copy : plan.copies) {
    if (copy.direction == host::CopyDirection::HostToDevice &&
        copy.source.kind == host::SlotKind::Input)
      total += copy.bytes;
  }
  if (total < kWorthStaging) return;  // nothing allocated: source() finds no staged copy
  staged_.assign(plan.copies.size(), nullptr);
  chunks_left_.assign(plan.copies.size(), 0);
  // Per input: its page-locked block, made on the first copy that reads it; null for inputs
  // that are page-locked or not read.
  std::vector<char*> block_of(arguments.size(), nullptr);
  std::vector<int8_t> pageable(arguments.size(), -1);  // -1: not asked yet
  for (size_t c = 0; c < plan.copies.size(); ++c) {
    const ExecutionPlan::MemoryCopy& copy = plan.copies[c];
    if (copy.direction != host::CopyDirection::HostToDevice ||
        copy.source.kind != host::SlotKind::Input || copy.bytes == 0)
      continue;
    const auto input = static_cast<size_t>(copy.source.index);
    const auto& tensor = std::get<HostTensor>(arguments[input]);
    if (pageable[input] < 0) pageable[input] = driver::isPinnedHost(tensor.data()) ? 0 : 1;
    if (pageable[input] == 0) continue;
    if (block_of[input] == nullptr) {
      const auto bytes = static_cast<size_t>(tensor.numel() * sizeInBytes(tensor.dtype()));
      blocks_.push_back(driver::allocatePinnedHost(bytes));
      block_of[input] = static_cast<char*>(blocks_.back().get());
    }
    const auto* from = static_cast<const char*>(tensor.data()) + copy.source_offset;
    char* into = block_of[input] + copy.source_offset;
    staged_[c] = into;
    for (size_t done = 0; done < copy.bytes; done += kChunkBytes) {
      chunks_.push_back({c, from + done, into + done, std::min(kChunkBytes, copy.bytes - done)});
      ++chunks_left_[c];
    }
  }
  const auto count = static_cast<size_t>(threads());
  for (size_t t = 0; t < std::min(count, chunks_.size()); ++t)
    workers_.emplace_back([this] { work(); });
}

PageableStaging::~PageableStaging() {
  for (std::thread& worker : workers_) worker.join();
}

void PageableStaging::work() {
  while (true) {
    Chunk chunk;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ == chunks_.size()) return;
      chunk = chunks_[next_++];
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

}  // namespace braze::runtime_detail
