#include "copy_engine_allgather.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"

namespace braze::host {

namespace {

// What each rank tells the others before anyone maps anything. Exchanged as raw bytes.
struct PeerRecord {
  uint64_t host = 0;  // a hash of the host name: IPC handles mean nothing on another host
  int32_t exported = 0;
  int32_t pid = 0;
  CUipcMemHandle staging{};
  CUipcMemHandle pad{};
  char failure[112] = {};
};

// Whether a rank mapped every peer's memory, and if not, why.
struct MapResult {
  int32_t mapped = 0;
  char failure[124] = {};
};

uint64_t hostHash() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return std::hash<std::string>{}(name);
}

std::string errorOf(CUresult result) {
  const char* name = nullptr;
  driver::driverApi().getErrorName(result, &name);
  return name != nullptr ? name : "an unknown CUDA error";
}

void copyText(const std::string& text, char* into, size_t capacity) {
  std::strncpy(into, text.c_str(), capacity - 1);
  into[capacity - 1] = '\0';
}

}  // namespace

std::unique_ptr<CopyEngineAllgather> CopyEngineAllgather::create(int64_t rank, int64_t size,
                                                                 int device, size_t slot_bytes,
                                                                 const Exchange& exchange,
                                                                 std::string& why_not) {
  std::unique_ptr<CopyEngineAllgather> engine(new CopyEngineAllgather);
  engine->rank_ = rank;
  engine->size_ = size;
  engine->device_ = device;
  // Whole 2 MiB pages: a later, slightly larger part still fits.
  constexpr size_t kPage = size_t{2} << 20;
  engine->slot_bytes_ = std::max(kPage, (slot_bytes + kPage - 1) / kPage * kPage);
  const auto n = static_cast<size_t>(size);
  const auto me = static_cast<size_t>(rank);
  driver::makePrimaryContextCurrent(device);
  const driver::DriverApi& cu = driver::driverApi();

  // This rank's memory, zeroed signal words, and its IPC handles.
  std::string failure;
  auto attempt = [&](CUresult result, const char* what) {
    if (result != CUDA_SUCCESS && failure.empty())
      failure = std::string(what) + ": " + errorOf(result);
    return result == CUDA_SUCCESS;
  };
  PeerRecord mine;
  mine.host = hostHash();
  mine.pid = static_cast<int32_t>(getpid());
  const bool exported =
      attempt(cu.streamCreate(&engine->release_stream_, CU_STREAM_NON_BLOCKING),
              "cuStreamCreate") &&
      attempt(cu.memAlloc(&engine->own_staging_, kSlots * n * engine->slot_bytes_),
              "cuMemAlloc of the staging slots") &&
      attempt(cu.memAlloc(&engine->own_pad_, padWords(size) * sizeof(uint32_t)),
              "cuMemAlloc of the signal words") &&
      attempt(cu.memsetD32Async(engine->own_pad_, 0, padWords(size), engine->release_stream_),
              "cuMemsetD32Async") &&
      attempt(cu.streamSynchronize(engine->release_stream_), "cuStreamSynchronize") &&
      attempt(cu.ipcGetMemHandle(&mine.staging, engine->own_staging_), "cuIpcGetMemHandle") &&
      attempt(cu.ipcGetMemHandle(&mine.pad, engine->own_pad_), "cuIpcGetMemHandle");
  mine.exported = exported ? 1 : 0;
  copyText(failure, mine.failure, sizeof(mine.failure));

  std::vector<PeerRecord> records(n);
  {
    const std::vector<std::byte> all = exchange(std::vector<std::byte>(
        reinterpret_cast<const std::byte*>(&mine), reinterpret_cast<const std::byte*>(&mine + 1)));
    BRAZE_INTERNAL_CHECK(all.size() == n * sizeof(PeerRecord)) << "copy-engine allgather setup";
    std::memcpy(records.data(), all.data(), all.size());
  }

  // Map every peer's memory, unless some rank cannot take part.
  engine->staging_.assign(n, 0);
  engine->pads_.assign(n, 0);
  engine->staging_[me] = engine->own_staging_;
  engine->pads_[me] = engine->own_pad_;
  MapResult result;
  std::string refusal;
  for (size_t p = 0; p < n && refusal.empty(); ++p) {
    if (!records[p].exported) {
      refusal = "rank " + std::to_string(p) + " could not export its memory (" +
                std::string(records[p].failure) + ")";
    } else if (records[p].host != mine.host) {
      refusal = "rank " + std::to_string(p) + " runs on another host";
    }
  }
  if (refusal.empty()) {
    for (size_t p = 0; p < n; ++p) {
      if (p == me) continue;
      const std::string peer = "rank " + std::to_string(p);
      if (!attempt(cu.ipcOpenMemHandle(&engine->staging_[p], records[p].staging,
                                       CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                   ("cuIpcOpenMemHandle of " + peer + "'s staging slots").c_str()) ||
          !attempt(cu.ipcOpenMemHandle(&engine->pads_[p], records[p].pad,
                                       CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                   ("cuIpcOpenMemHandle of " + peer + "'s signal words").c_str()))
        break;
    }
    result.mapped = failure.empty() ? 1 : 0;
    copyText(failure, result.failure, sizeof(result.failure));
  }
  std::vector<MapResult> results(n);
  {
    const std::vector<std::byte> all =
        exchange(std::vector<std::byte>(reinterpret_cast<const std::byte*>(&result),
                                        reinterpret_cast<const std::byte*>(&result + 1)));
    BRAZE_INTERNAL_CHECK(all.size() == n * sizeof(MapResult)) << "copy-engine allgather setup";
    std::memcpy(results.data(), all.data(), all.size());
  }
  for (size_t p = 0; p < n && refusal.empty(); ++p) {
    if (!results[p].mapped)
      refusal = "rank " + std::to_string(p) + " could not map its peers' memory (" +
                std::string(results[p].failure) + ")";
  }
  if (refusal.empty()) {
    engine->side_streams_.assign(n, nullptr);
    engine->joins_.assign(n, nullptr);
    for (size_t p = 0; p < n && failure.empty(); ++p) {
      if (p == me) continue;
      attempt(cu.streamCreate(&engine->side_streams_[p], CU_STREAM_NON_BLOCKING),
              "cuStreamCreate") &&
          attempt(cu.eventCreate(&engine->joins_[p], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    attempt(cu.eventCreate(&engine->fork_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    // Streams and events fail only when the device is out of resources: a rank-local failure
    // that the next call reports as a CUDA error.
    if (!failure.empty()) BRAZE_THROW() << "rank " << rank << ": " << failure;
    return engine;
  }
  why_not = refusal;
  return nullptr;
}

CopyEngineAllgather::~CopyEngineAllgather() {
  destroy();
}

void CopyEngineAllgather::destroy() noexcept {
  try {
    driver::makePrimaryContextCurrent(device_);
    const driver::DriverApi& cu = driver::driverApi();
    for (CUstream stream : side_streams_)
      if (stream != nullptr) (void)cu.streamSynchronize(stream);
    for (size_t p = 0; p < staging_.size(); ++p) {
      if (static_cast<int64_t>(p) == rank_) continue;
      if (staging_[p] != 0) (void)cu.ipcCloseMemHandle(staging_[p]);
      if (pads_[p] != 0) (void)cu.ipcCloseMemHandle(pads_[p]);
    }
    for (CUstream stream : side_streams_)
      if (stream != nullptr) (void)cu.streamDestroy(stream);
    for (CUevent event : joins_)
      if (event != nullptr) (void)cu.eventDestroy(event);
    if (fork_ != nullptr) (void)cu.eventDestroy(fork_);
    if (own_staging_ != 0) (void)cu.memFree(own_staging_);
    if (own_pad_ != 0) (void)cu.memFree(own_pad_);
    std::lock_guard<std::mutex> held(release_mutex_);
    if (release_stream_ != nullptr) (void)cu.streamDestroy(release_stream_);
    release_stream_ = nullptr;
  } catch (...) {
    // A destructor cannot report; the memory goes with the context.
  }
}

CUdeviceptr CopyEngineAllgather::signal(int64_t rank, int64_t word) const {
  return pads_[static_cast<size_t>(rank)] + static_cast<CUdeviceptr>(word) * sizeof(uint32_t);
}

void CopyEngineAllgather::run(CUdeviceptr send, CUdeviceptr recv, size_t bytes, CUstream stream) {
  BRAZE_INTERNAL_CHECK(fits(bytes))
      << "a part of " << bytes << " bytes in staging slots of " << slot_bytes_;
  const uint32_t g = generation_.load() + 1;
  const int64_t slot = g % kSlots;
  const auto block = static_cast<CUdeviceptr>(bytes);
  BRAZE_CU(eventRecord, fork_, stream);
  BRAZE_CU(memcpyDtoDAsync, recv + static_cast<CUdeviceptr>(rank_) * block, send, bytes, stream);
  // Peers in the order rank + 1, rank + 2, ...: each GPU starts writing to a different one.
  for (int64_t k = 1; k < size_; ++k) {
    const int64_t p = (rank_ + k) % size_;
    const auto index = static_cast<size_t>(p);
    CUstream side = side_streams_[index];
    BRAZE_CU(streamWaitEvent, side, fork_, 0);
    // The peer has copied out what this rank pushed into the slot `kSlots` generations ago.
    if (g > kSlots)
      BRAZE_CU(streamWaitValue32, side, signal(rank_, freeWord(p)), g - kSlots,
               CU_STREAM_WAIT_VALUE_GEQ);
    BRAZE_CU(memcpyDtoDAsync, staging_[index] + blockOffset(slot, rank_), send, bytes, side);
    // Fenced after the push (no CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER).
    BRAZE_CU(streamWriteValue32, side, signal(p, readyWord(slot, rank_)), g,
             CU_STREAM_WRITE_VALUE_DEFAULT);
    BRAZE_CU(streamWaitValue32, side, signal(rank_, readyWord(slot, p)), g,
             CU_STREAM_WAIT_VALUE_GEQ);
    BRAZE_CU(memcpyDtoDAsync, recv + static_cast<CUdeviceptr>(p) * block,
             own_staging_ + blockOffset(slot, p), bytes, side);
    BRAZE_CU(streamWriteValue32, side, signal(p, freeWord(rank_)), g,
             CU_STREAM_WRITE_VALUE_DEFAULT);
    BRAZE_CU(eventRecord, joins_[index], side);
    BRAZE_CU(streamWaitEvent, stream, joins_[index], 0);
  }
  generation_.store(g);
}

void CopyEngineAllgather::release() noexcept {
  try {
    std::lock_guard<std::mutex> held(release_mutex_);
    if (release_stream_ == nullptr || own_pad_ == 0) return;
    driver::makePrimaryContextCurrent(device_);
    // Waits compare cyclically ((int32_t)(word - value) >= 0): a value far ahead of every
    // generation enqueued lets them all pass.
    const uint32_t ahead = generation_.load() + kSlots + (1u << 30);
    (void)driver::driverApi().memsetD32Async(own_pad_, ahead, padWords(size_), release_stream_);
  } catch (...) {
    // Without a context there is nothing left to release.
  }
}

}  // namespace braze::host
