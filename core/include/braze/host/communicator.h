#pragma once

#include <cuda.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "braze/driver/nccl_library.h"
#include "braze/host/launch_environment.h"
#include "braze/host/store.h"
#include "braze/ir/data_type.h"

namespace braze::host {

/// What moves an allgather's data between GPUs.
enum class AllgatherTransport {
  /// Copy engines for allgathers beside compute (Overlap::BesideCompute: the steps of a stream
  /// loop), NCCL for the others. Alone, NCCL's kernels move a part faster (0.69 against 0.75 ms
  /// for 64 MiB parts on 4 H200s); beside a GEMM they wait for its SMs, which copy engines do not.
  Auto,
  /// NCCL's allgather kernels.
  Nccl,
  /// The GPUs' copy engines, writing into buffers every rank maps (CUDA IPC; ranks of one host
  /// whose GPUs reach each other), ordered by signal words the GPU's front end writes and waits
  /// on: no SM is taken, so the transfer runs beside a GEMM that holds every SM. Falls back to
  /// NCCL, on every rank, when some rank cannot map its peers' memory.
  CopyEngines,
};

/// Whether other streams compute while a collective runs, which decides how
/// AllgatherTransport::Auto moves an allgather.
enum class Overlap {
  Alone,
  /// A step of a stream loop: chunk i's transfer runs while chunk i - 1 computes.
  BesideCompute,
};

/// How long a rank waits for its peers, at the rendezvous and in waitFor(), and how it moves
/// allgathers.
struct CommunicatorOptions {
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
  AllgatherTransport allgather = AllgatherTransport::Auto;
};

class CopyEngineAllgather;

/// The reduction a collective applies elementwise across ranks.
enum class ReduceOp { Sum, Product, Max, Min, Average };

/// An NCCL communicator over every rank of a launch, one process per GPU.
///
/// Collectives take raw device pointers of this communicator's device and a stream of it; they
/// only enqueue work. Every rank must call the same collectives in the same order with the
/// same counts, as NCCL requires. A peer that dies or never calls leaves the others' streams
/// waiting forever: waitFor() bounds that wait by the timeout, aborts the communicator and
/// throws instead. After an abort, every call throws naming the first failure.
class Communicator {
 public:
  /// Joins the communicator of `launch.world_size` ranks as rank `launch.rank`, on CUDA device
  /// `device` (usually launch.local_rank). Rank 0 makes NCCL's unique id and sets it in `store`;
  /// the other ranks get it from there (waiting up to `options.timeout`) before they touch the
  /// GPU. Rank 0 first checks that its device is usable, so that it never publishes an id for a
  /// communicator it cannot join. The store key carries a generation (Store::nextGeneration),
  /// so ranks that create several communicators in the same order pair them up. Throws a
  /// braze::Error naming the rank and what failed: NCCL missing, no GPU, the rendezvous timed
  /// out, ncclCommInitRank failed. ncclCommInitRank itself blocks until every rank joins.
  static Communicator create(const LaunchEnvironment& launch, Store& store, int device,
                             CommunicatorOptions options = {});

  /// Uses `comm`, an NCCL communicator made elsewhere in this process (a PyTorch process
  /// group's), as rank `rank` of `size` on CUDA device `device`, without owning it: destroying
  /// the returned communicator leaves `comm` to its owner, who must keep it alive (and not
  /// destroy it) until then, and after the work enqueued through it is done.
  ///
  /// Collectives through it and the owner's own go to one NCCL communicator, in the order this
  /// process calls them: every rank must interleave them in the same order, as NCCL requires.
  ///
  /// Failures: when waitFor() or the watchdog gives up (a dead peer, a timeout, NCCL's
  /// asynchronous error), Braze stops using the handle and stops its in-flight work with
  /// ncclCommRevoke (NCCL 2.28+), which leaves it allocated for the owner to destroy. The
  /// owner's group is then unusable, as after an NCCL error of its own: its next collective
  /// fails, and destroying it is all that is left. With an NCCL older than 2.28 there is no
  /// revoke, and the handle is aborted (ncclCommAbort), which frees it under its owner: the
  /// owner must then neither use nor destroy its group (end the process instead).
  ///
  /// split() of a borrowed communicator gives teams Braze owns. Throws, before touching `comm`
  /// where it can, when `comm` is null (its owner has not created it yet), the rank, size or
  /// device are out of range, or NCCL is not available; when this process maps another NCCL
  /// library besides the one Braze calls (driver::ncclCopiesProblem: a handle only means
  /// something to the library that made it); and when NCCL says `comm` has another rank, size
  /// or device than the ones given.
  static Communicator borrow(driver::NcclComm comm, int64_t rank, int64_t size, int64_t local_rank,
                             int device, CommunicatorOptions options = {});

  /// A communicator of the ranks of `team` (ranks of this one, in the order the new ranks
  /// take), made with ncclCommSplit. Collective over this communicator: every rank calls it at
  /// the same point, each with its own team (teams are disjoint); a rank outside every team
  /// passes an empty one and gets nothing. Throws naming the team when this rank is not in it
  /// twice or at all, or when the NCCL library has no ncclCommSplit (before 2.18).
  std::optional<Communicator> split(const std::vector<int64_t>& team);

  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  /// Destroys the NCCL communicator, which waits for its enqueued work; after a failure (or
  /// when moved from) there is nothing left to destroy. A borrowed one waits for the work
  /// handed to watch() and leaves the handle to its owner.
  ~Communicator();

  int64_t rank() const { return rank_; }
  int64_t size() const { return size_; }
  int64_t localRank() const { return local_rank_; }
  int device() const { return device_; }
  /// Whether this communicator was borrowed (borrow()): its handle is someone else's.
  bool borrowed() const;

  /// recv[i] = op over ranks of send[i], for `count` elements. send may equal recv.
  void allReduce(CUdeviceptr send, CUdeviceptr recv, size_t count, DataType dtype, ReduceOp op,
                 CUstream stream);
  /// recv = the ranks' send buffers of `send_count` elements each, concatenated in rank order,
  /// moved as allgatherTransport() says for `overlap`. With copy engines, the first call (and a
  /// call with a larger part than any before) maps every peer's staging memory, waiting for the
  /// peers.
  void allGather(CUdeviceptr send, CUdeviceptr recv, size_t send_count, DataType dtype,
                 CUstream stream, Overlap overlap = Overlap::Alone);
  /// send holds size() blocks of `recv_count` elements; rank r receives block r reduced by `op`
  /// over all ranks.
  void reduceScatter(CUdeviceptr send, CUdeviceptr recv, size_t recv_count, DataType dtype,
                     ReduceOp op, CUstream stream);
  /// recv = rank `root`'s send, on every rank (send is read on `root` only).
  void broadcast(CUdeviceptr send, CUdeviceptr recv, size_t count, DataType dtype, int64_t root,
                 CUstream stream);
  /// Point to point: `peer` must call recv (send) with the same count and dtype.
  void send(CUdeviceptr send, size_t count, DataType dtype, int64_t peer, CUstream stream);
  void recv(CUdeviceptr recv, size_t count, DataType dtype, int64_t peer, CUstream stream);
  /// send and recv hold size() blocks of `count_per_rank` elements: block p of send goes to rank
  /// p, and block p of recv comes from rank p. One group of sends and receives.
  void allToAll(CUdeviceptr send, CUdeviceptr recv, size_t count_per_rank, DataType dtype,
                CUstream stream);
  /// Sends `count` elements of `send` to rank `to` and receives as many into `recv` from rank
  /// `from`, in one group (either may be absent; each peer calls it with the roles swapped).
  /// Grouped, a rank that both sends and receives (pipeline meshes that share devices) never
  /// waits for a peer that is itself waiting to send.
  void sendRecv(CUdeviceptr send, std::optional<int64_t> to, CUdeviceptr recv,
                std::optional<int64_t> from, size_t count, DataType dtype, CUstream stream);

  /// Sets how later allgathers move data. Every rank must set the same transport at the same
  /// point of its calls, as for a collective.
  void setAllgatherTransport(AllgatherTransport transport) { options_.allgather = transport; }
  AllgatherTransport allgatherTransport() const { return options_.allgather; }
  /// Why allgathers asked to use copy engines use NCCL instead (some rank could not map its
  /// peers' memory); empty when they do use copy engines or were never asked to.
  const std::string& copyEnginesRefusal() const { return copy_engines_refusal_; }
  /// How many allgathers the copy engines moved so far.
  int64_t copyEngineAllgathers() const { return copy_engine_allgathers_; }

  /// Blocks until the work enqueued on `stream` is done, polling the stream and NCCL's
  /// asynchronous error. On an NCCL error, a CUDA error, or when `timeout` passes first, aborts
  /// the communicator and throws a braze::Error naming this rank, the last collective enqueued
  /// and the reason, so a dead peer raises instead of hanging.
  void waitFor(CUstream stream);
  /// Returns at once, handing the work enqueued on `stream` so far to this communicator's
  /// watchdog thread (started on first use, shared with the teams split off): when that work
  /// is not done within the timeout (a dead or stalled peer), or NCCL reports an asynchronous
  /// error first, the watchdog aborts this communicator and its teams, so the stream drains
  /// instead of hanging, and the next call throws naming the collective and the reason. For
  /// callers that leave the waiting to the user (Python's fd.execute of a sharded definition).
  void watch(CUstream stream);
  /// Throws as waitFor() does when NCCL reported an asynchronous error; never blocks.
  void checkHealth();

  /// The NCCL handle, for code that calls NCCL itself; null after a failure.
  driver::NcclComm handle() const;

 private:
  Communicator(driver::NcclComm comm, const LaunchEnvironment& launch, int device,
               CommunicatorOptions options);
  /// The collective last enqueued, kept as its parts (formatted only when a message needs it:
  /// enqueueing stays free of string building). `detail` follows the count: "(sum)",
  /// "per rank", or with `peer` >= 0 "from rank" / "to rank".
  struct Operation {
    const char* collective = nullptr;  ///< null: none yet
    size_t count = 0;
    DataType dtype = DataType::Float32;
    const char* detail = nullptr;
    int64_t peer = -1;
    std::string toString() const;
  };
  /// The NCCL communicator and its first failure, behind a lock: the watchdog's thread may
  /// abort it while this one enqueues.
  struct Handle;
  /// The watchdog thread, its events and the handles it guards (this one's and its teams').
  struct Watch;
  /// The work of one watch(): an event on the stream, and the collective last enqueued.
  class WatchedStream;
  using Lock = std::unique_lock<std::mutex>;

  /// Locks the handle, checks the state before enqueueing, makes the device current and
  /// records the collective for later messages. The enqueue happens under the returned lock.
  Lock begin(const char* collective, size_t count, DataType dtype, const char* detail = nullptr,
             int64_t peer = -1);
  /// Throws naming the call when an enqueue failed; aborts first when NCCL says the
  /// communicator is broken. The handle's lock is held.
  void finish(driver::NcclResult result, const char* call);
  /// Runs `body` between ncclGroupStart and ncclGroupEnd (closed whatever happens inside), then
  /// finish() with the first failing call; `body` names the call it made last in `call`.
  void inGroup(const std::function<driver::NcclResult(const char*& call)>& body);
  /// Aborts and throws; the handle's lock is held.
  [[noreturn]] void fail(const std::string& reason);
  /// checkHealth() with the handle's lock held.
  void checkHealthLocked();
  Lock lock() const;
  driver::NcclComm comm() const;
  /// This communicator's watch, made on first use.
  Watch& watchState();
  /// The copy-engine allgather for parts of `bytes`, set up (collectively, on `stream`) on first
  /// use and again, larger, for a larger part; null when some rank cannot take part.
  CopyEngineAllgather* copyEnginesFor(size_t bytes, CUstream stream);
  /// Every rank's `bytes` in rank order (NCCL's allgather on `stream`, waited for): the
  /// setup's exchange.
  std::vector<std::byte> exchange(const std::vector<std::byte>& bytes, CUstream stream);
  void release() noexcept;

  std::shared_ptr<Handle> handle_;
  std::shared_ptr<Watch> watch_;
  int64_t rank_ = 0;
  int64_t size_ = 1;
  int64_t local_rank_ = 0;
  int device_ = 0;
  CommunicatorOptions options_;
  Operation last_operation_;
  /// The copy-engine allgather in use, the smaller ones it replaced (their memory is mapped by
  /// the peers, whose streams may still read it: kept until this communicator goes), and why
  /// it could not be set up.
  std::shared_ptr<CopyEngineAllgather> copy_engines_;
  std::vector<std::shared_ptr<CopyEngineAllgather>> retired_copy_engines_;
  std::string copy_engines_refusal_;
  int64_t copy_engine_allgathers_ = 0;
};

}  // namespace braze::host
