#include "braze/host/communicator.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"
#include "braze/host/watchdog.h"
#include "copy_engine_allgather.h"

namespace braze::host {

namespace {

using driver::NcclDataType;
using driver::NcclRedOp;
using driver::NcclResult;
using Clock = std::chrono::steady_clock;

// How messages show a reduction, after the count: "allReduce of 4096 bfloat16 (sum)".
const char* detailOf(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "(sum)";
    case ReduceOp::Product:
      return "(product)";
    case ReduceOp::Max:
      return "(max)";
    case ReduceOp::Min:
      return "(min)";
    case ReduceOp::Average:
      return "(average)";
  }
  return "(unknown)";
}

NcclRedOp ncclOpOf(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return NcclRedOp::Sum;
    case ReduceOp::Product:
      return NcclRedOp::Prod;
    case ReduceOp::Max:
      return NcclRedOp::Max;
    case ReduceOp::Min:
      return NcclRedOp::Min;
    case ReduceOp::Average:
      return NcclRedOp::Avg;
  }
  BRAZE_INTERNAL_CHECK(false) << "unknown ReduceOp " << static_cast<int>(op);
}

// The NCCL type moving `dtype`. NCCL has no bool, and reducing float8 would round at every
// step of a sum; both still move unchanged as bytes.
NcclDataType ncclTypeOf(DataType dtype, const char* collective, bool reduces) {
  switch (dtype) {
    case DataType::Float32:
      return NcclDataType::Float32;
    case DataType::Float16:
      return NcclDataType::Float16;
    case DataType::BFloat16:
      return NcclDataType::BFloat16;
    case DataType::Float64:
      return NcclDataType::Float64;
    case DataType::Int32:
      return NcclDataType::Int32;
    case DataType::Int64:
    case DataType::Index:
      return NcclDataType::Int64;
    case DataType::Bool:
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
      BRAZE_USER_CHECK(!reduces)
          << collective << " cannot reduce " << dtype
          << " tensors: NCCL reduces float16, bfloat16, float32, float64, int32 and int64. "
          << "Cast to one of them (int32 for bool, bfloat16 or float32 for float8) first";
      return NcclDataType::Uint8;
  }
  BRAZE_INTERNAL_CHECK(false) << "unknown DataType " << static_cast<int>(dtype);
}

const void* pointerOf(CUdeviceptr address) {
  return reinterpret_cast<const void*>(static_cast<uintptr_t>(address));
}
void* mutablePointerOf(CUdeviceptr address) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

std::string describeNccl(NcclResult result, driver::NcclComm comm) {
  const driver::NcclApi& api = driver::ncclApi();
  const char* description = api.getErrorString(result);
  const char* last = api.getLastError(comm);
  std::string text = description != nullptr ? description : "unknown NCCL error";
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

}  // namespace

struct Communicator::Handle {
  mutable std::mutex mutex;
  driver::NcclComm comm = nullptr;
  /// False for a borrowed handle (Communicator::borrow): its owner destroys it.
  bool owned = true;
  /// "rank 1 of 4 (CUDA device 1)": how messages name this communicator.
  std::string who;
  std::string failure;
  /// What the abort did to the handle and what is left to do, for the message that reports it.
  std::string aftermath;
  /// Run once on abort, before NCCL's: work that waits on peers outside NCCL (the copy-engine
  /// allgather's signal words) must drain too, and first, because ncclCommAbort frees memory,
  /// which waits for the device.
  std::vector<std::function<void()>> on_abort;

  /// Aborts (not destroys: destroy would wait for work that cannot finish) and keeps the
  /// first failure. A borrowed handle is revoked instead where NCCL can: that stops its work
  /// as an abort does but leaves it allocated, since its owner still holds it and will destroy
  /// it. The lock is held.
  void abortLocked(const std::string& reason) {
    if (failure.empty()) failure = reason;
    if (comm == nullptr) return;
    for (const std::function<void()>& release : std::exchange(on_abort, {})) release();
    const driver::NcclApi& nccl = driver::ncclApi();
    if (owned) {
      nccl.commAbort(comm);
      aftermath = "The communicator was aborted; create a new one to go on";
    } else if (nccl.commRevoke != nullptr) {
      (void)nccl.commRevoke(comm, 0);
      aftermath =
          "The borrowed communicator was revoked (ncclCommRevoke), so its owner's group is "
          "unusable too: destroy that group and make a new one to go on";
    } else {
      // Nothing else stops the work of a dead peer's collective; the owner is told below.
      nccl.commAbort(comm);
      aftermath = "The borrowed communicator was aborted (" + nccl.path + ", NCCL " +
                  driver::ncclVersionString(nccl.version) +
                  ", has no ncclCommRevoke), which freed it under its owner: neither use nor "
                  "destroy the owner's group; end the process";
    }
    comm = nullptr;
  }
};

struct Communicator::Watch {
  explicit Watch(int device) : device(device) {}
  ~Watch() {
    watchdog.reset();  // stops its thread, which returns events here
    if (free_events.empty()) return;
    try {
      driver::makePrimaryContextCurrent(device);
      for (CUevent event : free_events) (void)driver::driverApi().eventDestroy(event);
    } catch (...) {
      // A destructor cannot report; the events go with the context.
    }
  }
  CUevent takeEvent() {
    {
      std::lock_guard<std::mutex> lock(events_mutex);
      if (!free_events.empty()) {
        CUevent event = free_events.back();
        free_events.pop_back();
        return event;
      }
    }
    CUevent event = nullptr;
    BRAZE_CU(eventCreate, &event, CU_EVENT_DISABLE_TIMING);
    return event;
  }
  void giveBack(CUevent event) {
    std::lock_guard<std::mutex> lock(events_mutex);
    free_events.push_back(event);
  }
  std::vector<std::shared_ptr<Handle>> guardedHandles() {
    std::vector<std::shared_ptr<Handle>> alive;
    std::lock_guard<std::mutex> lock(handles_mutex);
    for (const std::weak_ptr<Handle>& weak : guarded) {
      if (std::shared_ptr<Handle> handle = weak.lock()) alive.push_back(std::move(handle));
    }
    return alive;
  }
  void guard(const std::shared_ptr<Handle>& handle) {
    std::lock_guard<std::mutex> lock(handles_mutex);
    guarded.push_back(handle);
  }

  const int device;
  std::mutex events_mutex;
  std::vector<CUevent> free_events;
  std::mutex handles_mutex;
  std::vector<std::weak_ptr<Handle>> guarded;
  std::unique_ptr<Watchdog> watchdog;
};

// Work enqueued on a stream up to an event: done when the event is. The event goes back to
// `watch` for the next run.
class Communicator::WatchedStream : public Watchdog::Work {
 public:
  WatchedStream(CUevent event, Watch* watch, const Operation& last)
      : event_(event), watch_(watch), last_(last) {}
  ~WatchedStream() override { watch_->giveBack(event_); }
  bool done(std::string& error) override {
    const CUresult state = driver::driverApi().eventQuery(event_);
    if (state == CUDA_SUCCESS) return true;
    if (state == CUDA_ERROR_NOT_READY) return false;
    const char* name = nullptr;
    driver::driverApi().getErrorName(state, &name);
    error = std::string("its stream reports ") + (name != nullptr ? name : "an unknown CUDA error");
    return false;
  }
  std::string describe() const override { return "the work up to " + last_.toString(); }

 private:
  CUevent event_;
  Watch* watch_;
  Operation last_;
};

Communicator Communicator::create(const LaunchEnvironment& launch, Store& store, int device,
                                  CommunicatorOptions options) {
  const std::string who =
      "rank " + std::to_string(launch.rank) + " of " + std::to_string(launch.world_size);
  BRAZE_USER_CHECK(launch.world_size >= 1 && launch.world_size <= INT_MAX && launch.rank >= 0 &&
                   launch.rank < launch.world_size)
      << "cannot create a communicator for " << who
      << ": the rank must be in 0 .. world size - 1, and the world size in 1 .. " << INT_MAX;
  BRAZE_USER_CHECK(device >= 0) << "cannot create a communicator for " << who << " on CUDA device "
                                << device << ": device ordinals are 0 or more";
  // Every rank takes the generation, so that the next communicator's key differs.
  const std::string key =
      "braze/nccl_unique_id/" + std::to_string(store.nextGeneration("communicator"));
  driver::NcclComm comm = nullptr;
  try {
    const driver::NcclApi& nccl = driver::ncclApi();
    driver::NcclUniqueId id{};
    if (launch.rank == 0) {
      // Before publishing the id: the other ranks would wait in ncclCommInitRank for a rank 0
      // that never joins.
      driver::makePrimaryContextCurrent(device);
      driver::checkNccl(nccl.getUniqueId(&id), "ncclGetUniqueId");
      store.set(key, std::string_view(id.internal, sizeof(id.internal)));
    } else {
      const std::string bytes = store.get(key, options.timeout);
      BRAZE_USER_CHECK(bytes.size() == sizeof(id.internal))
          << "key '" << key << "' in " << store.describe() << " holds " << bytes.size()
          << " bytes, not the " << sizeof(id.internal)
          << " of an NCCL unique id; is another program using this store?";
      std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
      // Only now: a process forked before its parent used CUDA opens the GPU here first.
      driver::makePrimaryContextCurrent(device);
    }
    // NCCL takes the device from the CUDA runtime, which follows the current driver context.
    driver::checkNccl(nccl.commInitRank(&comm, static_cast<int>(launch.world_size), id,
                                        static_cast<int>(launch.rank)),
                      "ncclCommInitRank");
  } catch (const Error& error) {
    BRAZE_THROW() << who << " (CUDA device " << device
                  << ") cannot join the NCCL communicator: " << error.what();
  }
  return Communicator(comm, launch, device, options);
}

Communicator Communicator::borrow(driver::NcclComm comm, int64_t rank, int64_t size,
                                  int64_t local_rank, int device, CommunicatorOptions options) {
  const std::string who = "rank " + std::to_string(rank) + " of " + std::to_string(size) +
                          " (CUDA device " + std::to_string(device) + ")";
  // Checked before NCCL is loaded: these need neither NCCL nor a GPU.
  BRAZE_USER_CHECK(comm != nullptr)
      << "cannot borrow a null NCCL communicator as " << who
      << ": its owner has not made it yet. A PyTorch process group makes its communicator on "
         "its first collective, or in init_process_group when given device_id: run a "
         "collective on the group first";
  BRAZE_USER_CHECK(size >= 1 && size <= INT_MAX && rank >= 0 && rank < size && device >= 0)
      << "cannot borrow an NCCL communicator as " << who
      << ": the rank must be in 0 .. size - 1, the size in 1 .. " << INT_MAX
      << ", and the device 0 or more";
  const driver::NcclApi& nccl = driver::ncclApi();
  const std::string copies = driver::ncclCopiesProblem(driver::mappedLibraries(), nccl.file);
  BRAZE_USER_CHECK(copies.empty())
      << "cannot borrow an NCCL communicator as " << who << ": " << copies;
  // What NCCL says the handle is, where this NCCL can tell.
  const auto query = [&](NcclResult (*entry)(driver::NcclComm, int*),
                         const char* call) -> std::optional<int> {
    if (entry == nullptr) return std::nullopt;
    int value = -1;
    const NcclResult result = entry(comm, &value);
    BRAZE_USER_CHECK(result == NcclResult::Success)
        << "cannot borrow the NCCL communicator as " << who << ": " << call
        << " failed on it: " << describeNccl(result, comm)
        << ". Pass a live communicator: not destroyed, not aborted, and done being made";
    return value;
  };
  const auto shown = [](std::optional<int> value) {
    return value ? std::to_string(*value) : std::string("?");
  };
  const std::optional<int> count = query(nccl.commCount, "ncclCommCount");
  const std::optional<int> user_rank = query(nccl.commUserRank, "ncclCommUserRank");
  BRAZE_USER_CHECK((!count || *count == size) && (!user_rank || *user_rank == rank))
      << "cannot borrow the NCCL communicator as " << who << ": NCCL says it is rank "
      << shown(user_rank) << " of " << shown(count)
      << " (ncclCommUserRank, ncclCommCount). Pass the rank and size of the group that owns it "
         "(a PyTorch process group's pg.rank() and pg.size())";
  const std::optional<int> cu_device = query(nccl.commCuDevice, "ncclCommCuDevice");
  BRAZE_USER_CHECK(!cu_device || *cu_device == device)
      << "cannot borrow the NCCL communicator as " << who << ": NCCL says it runs on CUDA device "
      << *cu_device << ". Pass the device its owner made it on (for a PyTorch process group, "
      << "the CUDA device that was current when the group made it)";
  LaunchEnvironment launch;
  launch.rank = rank;
  launch.world_size = size;
  launch.local_rank = local_rank;
  Communicator borrowed(comm, launch, device, options);
  borrowed.handle_->owned = false;
  return borrowed;
}

std::optional<Communicator> Communicator::split(const std::vector<int64_t>& team) {
  checkHealth();
  for (int64_t member : team) {
    BRAZE_USER_CHECK(member >= 0 && member < size_)
        << "rank " << rank_ << " of " << size_ << ": a team names rank " << member
        << ", outside the communicator";
  }
  const auto at = std::find(team.begin(), team.end(), rank_);
  BRAZE_USER_CHECK(team.empty() ||
                   (at != team.end() && std::count(team.begin(), team.end(), rank_) == 1))
      << "rank " << rank_ << " of " << size_ << " cannot split off a team of ranks it is not "
      << "in exactly once";
  const driver::NcclApi& nccl = driver::ncclApi();
  BRAZE_USER_CHECK(nccl.commSplit != nullptr)
      << "rank " << rank_ << " of " << size_ << ": a team of some of the ranks (a 2-D mesh) "
      << "needs ncclCommSplit, which " << nccl.path << " (NCCL " << nccl.version
      << ") lacks; use NCCL 2.18 or newer";
  driver::makePrimaryContextCurrent(device_);
  // The team's smallest rank names it: disjoint teams get distinct colors. -1 (NCCL_SPLIT_NOCOLOR)
  // leaves this rank out.
  const int color =
      team.empty() ? -1 : static_cast<int>(*std::min_element(team.begin(), team.end()));
  const int key = team.empty() ? 0 : static_cast<int>(at - team.begin());
  driver::NcclComm sub = nullptr;
  last_operation_ = {"ncclCommSplit", team.size(), DataType::Int64, "ranks", -1};
  {
    Lock held = lock();  // checked healthy above
    finish(nccl.commSplit(handle_->comm, color, key, &sub, nullptr), "ncclCommSplit");
  }
  if (team.empty()) return std::nullopt;
  LaunchEnvironment launch;
  launch.rank = key;
  launch.world_size = static_cast<int64_t>(team.size());
  launch.local_rank = local_rank_;
  Communicator split(sub, launch, device_, options_);
  // A team's collectives run on the streams this communicator's runs do: one watchdog aborts
  // them all.
  watchState();
  split.watch_ = watch_;
  split.watch_->guard(split.handle_);
  return split;
}

Communicator::Communicator(driver::NcclComm comm, const LaunchEnvironment& launch, int device,
                           CommunicatorOptions options)
    : handle_(std::make_shared<Handle>()),
      rank_(launch.rank),
      size_(launch.world_size),
      local_rank_(launch.local_rank),
      device_(device),
      options_(options) {
  handle_->comm = comm;
  handle_->who = "rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                 " (CUDA device " + std::to_string(device_) + ")";
}

Communicator::Communicator(Communicator&& other) noexcept = default;

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = std::move(other.handle_);
    watch_ = std::move(other.watch_);
    rank_ = other.rank_;
    size_ = other.size_;
    local_rank_ = other.local_rank_;
    device_ = other.device_;
    options_ = other.options_;
    last_operation_ = other.last_operation_;
    copy_engines_ = std::move(other.copy_engines_);
    retired_copy_engines_ = std::move(other.retired_copy_engines_);
    copy_engines_refusal_ = std::move(other.copy_engines_refusal_);
  }
  return *this;
}

Communicator::~Communicator() {
  release();
}

void Communicator::release() noexcept {
  if (handle_ == nullptr) return;
  try {
    // Work handed to the watchdog ends first (or the watchdog aborts it): destroying the NCCL
    // communicator waits for its work, and would wait forever for a dead peer's.
    if (watch_ != nullptr && watch_->watchdog != nullptr) watch_->watchdog->drain();
    driver::NcclComm comm = nullptr;
    {
      Lock held = lock();
      comm = std::exchange(handle_->comm, nullptr);
      if (handle_->failure.empty()) handle_->failure = "this communicator was destroyed";
    }
    // A borrowed handle is its owner's to destroy.
    if (comm != nullptr && handle_->owned) {
      driver::makePrimaryContextCurrent(device_);
      driver::ncclApi().commDestroy(comm);
    }
  } catch (...) {
    // A destructor cannot report; the process keeps running with the communicator leaked.
  }
  copy_engines_.reset();
  retired_copy_engines_.clear();
  handle_.reset();
  watch_.reset();
}

Communicator::Lock Communicator::lock() const {
  BRAZE_USER_CHECK(handle_ != nullptr) << "this communicator was moved from or destroyed";
  return Lock(handle_->mutex);
}

driver::NcclComm Communicator::comm() const {
  return handle_->comm;
}

bool Communicator::borrowed() const {
  return handle_ != nullptr && !handle_->owned;
}

driver::NcclComm Communicator::handle() const {
  if (handle_ == nullptr) return nullptr;
  Lock held = lock();
  return handle_->comm;
}

void Communicator::fail(const std::string& reason) {
  handle_->abortLocked(handle_->who + ": " + last_operation_.toString() + " failed: " + reason);
  BRAZE_THROW() << handle_->failure << ". "
                << (handle_->aftermath.empty() ? "The communicator was aborted"
                                               : handle_->aftermath);
}

void Communicator::checkHealth() {
  Lock held = lock();
  checkHealthLocked();
}

void Communicator::checkHealthLocked() {
  BRAZE_USER_CHECK(handle_->comm != nullptr)
      << (handle_->failure.empty()
              ? "this communicator was moved from or destroyed"
              : "this communicator was aborted earlier: " + handle_->failure +
                    (handle_->aftermath.empty() ? "" : ". ") + handle_->aftermath);
  NcclResult async = NcclResult::Success;
  const NcclResult queried = driver::ncclApi().commGetAsyncError(handle_->comm, &async);
  if (queried != NcclResult::Success) {
    fail("ncclCommGetAsyncError failed: " + describeNccl(queried, handle_->comm));
  }
  if (async != NcclResult::Success && async != NcclResult::InProgress) {
    fail("NCCL reported " + describeNccl(async, handle_->comm));
  }
}

std::string Communicator::Operation::toString() const {
  if (collective == nullptr) return "no collective yet";
  std::ostringstream text;
  text << collective << " of " << count << " " << dtype;
  if (detail != nullptr) text << " " << detail;
  if (peer >= 0) text << " " << peer;
  return text.str();
}

Communicator::Lock Communicator::begin(const char* collective, size_t count, DataType dtype,
                                       const char* detail, int64_t peer) {
  Lock held = lock();
  // An asynchronous error of earlier work surfaces here rather than as a hang later.
  checkHealthLocked();
  driver::makePrimaryContextCurrent(device_);
  last_operation_.collective = collective;
  last_operation_.count = count;
  last_operation_.dtype = dtype;
  last_operation_.detail = detail;
  last_operation_.peer = peer;
  return held;
}

void Communicator::finish(NcclResult result, const char* call) {
  if (result == NcclResult::Success) return;
  const std::string why = describeNccl(result, handle_->comm);
  // A bad argument leaves the communicator usable; a broken one is aborted by checkHealth.
  checkHealthLocked();
  BRAZE_THROW() << "rank " << rank_ << " of " << size_ << ": " << call << " refused "
                << last_operation_.toString() << ": " << why;
}

void Communicator::allReduce(CUdeviceptr send, CUdeviceptr recv, size_t count, DataType dtype,
                             ReduceOp op, CUstream stream) {
  const NcclDataType type = ncclTypeOf(dtype, "allReduce", true);
  Lock held = begin("allReduce", count, dtype, detailOf(op));
  finish(driver::ncclApi().allReduce(pointerOf(send), mutablePointerOf(recv), count, type,
                                     ncclOpOf(op), comm(), stream),
         "ncclAllReduce");
}

void Communicator::allGather(CUdeviceptr send, CUdeviceptr recv, size_t send_count, DataType dtype,
                             CUstream stream, Overlap overlap) {
  const NcclDataType type = ncclTypeOf(dtype, "allGather", false);
  const size_t bytes = send_count * static_cast<size_t>(sizeInBytes(dtype));
  const bool by_copy_engines =
      options_.allgather == AllgatherTransport::CopyEngines ||
      (options_.allgather == AllgatherTransport::Auto && overlap == Overlap::BesideCompute);
  if (by_copy_engines && size_ > 1 && bytes > 0) {
    if (CopyEngineAllgather* engines = copyEnginesFor(bytes, stream)) {
      Lock held = begin("allGather by copy engines", send_count, dtype, "per rank");
      engines->run(send, recv, bytes, stream);
      ++copy_engine_allgathers_;
      return;
    }
  }
  Lock held = begin("allGather", send_count, dtype);
  finish(driver::ncclApi().allGather(pointerOf(send), mutablePointerOf(recv), send_count, type,
                                     comm(), stream),
         "ncclAllGather");
}

void Communicator::reduceScatter(CUdeviceptr send, CUdeviceptr recv, size_t recv_count,
                                 DataType dtype, ReduceOp op, CUstream stream) {
  const NcclDataType type = ncclTypeOf(dtype, "reduceScatter", true);
  Lock held = begin("reduceScatter", recv_count, dtype, detailOf(op));
  finish(driver::ncclApi().reduceScatter(pointerOf(send), mutablePointerOf(recv), recv_count, type,
                                         ncclOpOf(op), comm(), stream),
         "ncclReduceScatter");
}

void Communicator::broadcast(CUdeviceptr send, CUdeviceptr recv, size_t count, DataType dtype,
                             int64_t root, CUstream stream) {
  BRAZE_USER_CHECK(root >= 0 && root < size_)
      << "broadcast from root " << root << ": the communicator has ranks 0 .. " << size_ - 1;
  const NcclDataType type = ncclTypeOf(dtype, "broadcast", false);
  Lock held = begin("broadcast", count, dtype, "from rank", root);
  finish(driver::ncclApi().broadcast(pointerOf(send), mutablePointerOf(recv), count, type,
                                     static_cast<int>(root), comm(), stream),
         "ncclBroadcast");
}

void Communicator::send(CUdeviceptr send, size_t count, DataType dtype, int64_t peer,
                        CUstream stream) {
  sendRecv(send, peer, 0, std::nullopt, count, dtype, stream);
}

void Communicator::recv(CUdeviceptr recv, size_t count, DataType dtype, int64_t peer,
                        CUstream stream) {
  sendRecv(0, std::nullopt, recv, peer, count, dtype, stream);
}

void Communicator::allToAll(CUdeviceptr send, CUdeviceptr recv, size_t count_per_rank,
                            DataType dtype, CUstream stream) {
  const NcclDataType type = ncclTypeOf(dtype, "allToAll", false);
  Lock held = begin("allToAll", count_per_rank, dtype, "per rank");
  const driver::NcclApi& nccl = driver::ncclApi();
  const size_t block_bytes = count_per_rank * static_cast<size_t>(sizeInBytes(dtype));
  inGroup([&](const char*& call) {
    NcclResult result = NcclResult::Success;
    for (int64_t peer = 0; peer < size_ && result == NcclResult::Success; ++peer) {
      const size_t offset = static_cast<size_t>(peer) * block_bytes;
      result = nccl.send(pointerOf(send + offset), count_per_rank, type, static_cast<int>(peer),
                         comm(), stream);
      call = "ncclSend";
      if (result != NcclResult::Success) break;
      result = nccl.recv(mutablePointerOf(recv + offset), count_per_rank, type,
                         static_cast<int>(peer), comm(), stream);
      call = "ncclRecv";
    }
    return result;
  });
}

void Communicator::sendRecv(CUdeviceptr send, std::optional<int64_t> to, CUdeviceptr recv,
                            std::optional<int64_t> from, size_t count, DataType dtype,
                            CUstream stream) {
  BRAZE_USER_CHECK(!to || (*to >= 0 && *to < size_))
      << "send to rank " << *to << ": the communicator has ranks 0 .. " << size_ - 1;
  BRAZE_USER_CHECK(!from || (*from >= 0 && *from < size_))
      << "recv from rank " << *from << ": the communicator has ranks 0 .. " << size_ - 1;
  const char* name = to && from ? "sendRecv" : to ? "send" : "recv";
  const NcclDataType type = ncclTypeOf(dtype, name, false);
  Lock held = to && from ? begin(name, count, dtype)
              : to       ? begin(name, count, dtype, "to rank", *to)
                         : begin(name, count, dtype, "from rank", from.value_or(-1));
  const driver::NcclApi& nccl = driver::ncclApi();
  inGroup([&](const char*& call) {
    NcclResult result = NcclResult::Success;
    if (to) {
      result = nccl.send(pointerOf(send), count, type, static_cast<int>(*to), comm(), stream);
      call = "ncclSend";
    }
    if (from && result == NcclResult::Success) {
      result =
          nccl.recv(mutablePointerOf(recv), count, type, static_cast<int>(*from), comm(), stream);
      call = "ncclRecv";
    }
    return result;
  });
}

// One NCCL group around `body` (which names the call it made last in `call`): the sends and
// receives inside start together, so two ranks that both send and receive never wait on each
// other's order.
void Communicator::inGroup(const std::function<NcclResult(const char*& call)>& body) {
  const driver::NcclApi& nccl = driver::ncclApi();
  NcclResult result = nccl.groupStart();
  const char* call = "ncclGroupStart";
  if (result == NcclResult::Success) {
    result = body(call);
    // Closed whatever happened inside: an open group would swallow the next collective.
    const NcclResult ended = nccl.groupEnd();
    if (result == NcclResult::Success) {
      result = ended;
      call = "ncclGroupEnd";
    }
  }
  finish(result, call);
}

void Communicator::waitFor(CUstream stream) {
  checkHealth();
  driver::makePrimaryContextCurrent(device_);
  const auto query = driver::driverApi().streamQuery;
  const Clock::time_point deadline = Clock::now() + options_.timeout;
  // Short pauses: the caller waits for its results, and a pause longer than a few tens of
  // microseconds shows up in every call's time (a 1 ms cap added ~0.5 ms to multi-ms runs).
  auto pause = std::chrono::microseconds(2);
  while (true) {
    checkHealth();
    const CUresult state = query(stream);
    if (state == CUDA_SUCCESS) return;
    if (state != CUDA_ERROR_NOT_READY) {
      const char* name = nullptr;
      driver::driverApi().getErrorName(state, &name);
      Lock held = lock();
      fail(std::string("its stream reports ") + (name != nullptr ? name : "an unknown CUDA error"));
    }
    if (Clock::now() >= deadline) {
      Lock held = lock();
      fail("not finished after " + std::to_string(options_.timeout.count()) +
           " ms: a peer rank may have died, hung, or not called the same collective with the "
           "same counts (CommunicatorOptions::timeout sets the wait)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(50));
  }
}

std::vector<std::byte> Communicator::exchange(const std::vector<std::byte>& bytes,
                                              CUstream stream) {
  BRAZE_INTERNAL_CHECK(bytes.size() % sizeof(int32_t) == 0) << "exchange of " << bytes.size();
  driver::makePrimaryContextCurrent(device_);
  const driver::DriverApi& cu = driver::driverApi();
  const size_t n = static_cast<size_t>(size_);
  const size_t total = bytes.size() * n;
  // On the caller's stream, after its earlier collectives: NCCL matches a communicator's
  // collectives in the order they run, so one on a stream of its own could overtake them.
  // Pinned host memory and stream-ordered device memory: nothing here waits for the device
  // except waitFor, which is bounded by the timeout.
  void* host = nullptr;
  BRAZE_CU(memHostAlloc, &host, total, 0);
  CUdeviceptr buffer = 0;
  try {
    std::memcpy(static_cast<std::byte*>(host) + rank_ * bytes.size(), bytes.data(), bytes.size());
    BRAZE_CU(memAllocAsync, &buffer, total, stream);
    const CUdeviceptr mine = buffer + static_cast<CUdeviceptr>(rank_) * bytes.size();
    BRAZE_CU(memcpyHtoDAsync, mine, static_cast<std::byte*>(host) + rank_ * bytes.size(),
             bytes.size(), stream);
    {
      Lock held =
          begin("allGather (copy-engine setup)", bytes.size() / sizeof(int32_t), DataType::Int32);
      finish(driver::ncclApi().allGather(pointerOf(mine), mutablePointerOf(buffer),
                                         bytes.size() / sizeof(int32_t), NcclDataType::Int32,
                                         comm(), stream),
             "ncclAllGather");
    }
    BRAZE_CU(memcpyDtoHAsync, host, buffer, total, stream);
    BRAZE_CU(memFreeAsync, buffer, stream);
    buffer = 0;
    waitFor(stream);
  } catch (...) {
    if (buffer != 0) (void)cu.memFreeAsync(buffer, stream);
    // The stream may still write into `host`: leaked rather than freed under a copy.
    throw;
  }
  std::vector<std::byte> all(total);
  std::memcpy(all.data(), host, total);
  (void)cu.memFreeHost(host);
  return all;
}

CopyEngineAllgather* Communicator::copyEnginesFor(size_t bytes, CUstream stream) {
  if (copy_engines_ != nullptr && copy_engines_->fits(bytes)) return copy_engines_.get();
  if (!copy_engines_refusal_.empty()) return nullptr;
  checkHealth();
  // A larger part than before: twice the slots, so that parts growing a little at a time set
  // up a few times only.
  const size_t slot_bytes =
      copy_engines_ != nullptr ? std::max(bytes, 2 * copy_engines_->slotBytes()) : bytes;
  std::unique_ptr<CopyEngineAllgather> made = CopyEngineAllgather::create(
      rank_, size_, device_, slot_bytes,
      [this, stream](const std::vector<std::byte>& mine) { return exchange(mine, stream); },
      copy_engines_refusal_);
  if (made == nullptr) {
    copy_engines_refusal_ =
        handle_->who + ": allgathers use NCCL, not copy engines: " + copy_engines_refusal_;
    return nullptr;
  }
  if (copy_engines_ != nullptr) retired_copy_engines_.push_back(std::move(copy_engines_));
  copy_engines_ = std::move(made);
  {
    Lock held = lock();
    std::weak_ptr<CopyEngineAllgather> engines = copy_engines_;
    handle_->on_abort.emplace_back([engines] {
      if (std::shared_ptr<CopyEngineAllgather> alive = engines.lock()) alive->release();
    });
  }
  return copy_engines_.get();
}

Communicator::Watch& Communicator::watchState() {
  if (watch_ != nullptr) return *watch_;
  watch_ = std::make_shared<Watch>(device_);
  watch_->guard(handle_);
  Watch* watch = watch_.get();  // owns the watchdog: outlives its thread
  const std::string timeout = std::to_string(options_.timeout.count());
  auto expire = [watch, timeout](const std::string& reason) {
    for (const std::shared_ptr<Handle>& handle : watch->guardedHandles()) {
      std::lock_guard<std::mutex> held(handle->mutex);
      handle->abortLocked(handle->who + ": " + reason + " (the watchdog's timeout: " + timeout +
                          " ms; a peer rank may have died, hung, or not called the same "
                          "collective with the same counts; CommunicatorOptions::timeout sets "
                          "the wait)");
    }
  };
  // NCCL's asynchronous error of any guarded communicator, while work is pending.
  auto health = [watch]() -> std::string {
    for (const std::shared_ptr<Handle>& handle : watch->guardedHandles()) {
      std::lock_guard<std::mutex> held(handle->mutex);
      if (handle->comm == nullptr) continue;
      NcclResult async = NcclResult::Success;
      const NcclResult queried = driver::ncclApi().commGetAsyncError(handle->comm, &async);
      if (queried != NcclResult::Success) return "ncclCommGetAsyncError failed";
      if (async != NcclResult::Success && async != NcclResult::InProgress)
        return "NCCL reported " + describeNccl(async, handle->comm);
    }
    return {};
  };
  const int device = device_;
  watch_->watchdog =
      std::make_unique<Watchdog>(options_.timeout, std::move(expire), std::move(health),
                                 [device] { driver::makePrimaryContextCurrent(device); });
  return *watch_;
}

void Communicator::watch(CUstream stream) {
  checkHealth();
  driver::makePrimaryContextCurrent(device_);
  Watch& state = watchState();
  CUevent event = state.takeEvent();
  const CUresult recorded = driver::driverApi().eventRecord(event, stream);
  if (recorded != CUDA_SUCCESS) {
    state.giveBack(event);
    driver::checkDriver(recorded, "cuEventRecord", "while handing a stream to the watchdog");
  }
  state.watchdog->watch(std::make_unique<WatchedStream>(event, &state, last_operation_));
}

}  // namespace braze::host
