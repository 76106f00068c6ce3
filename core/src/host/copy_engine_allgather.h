#pragma once

// An allgather moved by the GPUs' copy engines instead of SM kernels, for ranks of one host
// whose GPUs can map each other's memory. NCCL's allgather kernels need SMs, which a GEMM
// enqueued before them holds until its CTAs retire, so a stream-pipelined allgather + GEMM
// gained nothing with them; copies and the signals that order them (stream memory operations,
// run by the GPU's front end) take no SM.

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace braze::host {

/// Every rank allocates `slots` staging slots, each with a block per rank (its own unused), and a
/// pad of signal words, and maps every peer's (CUDA IPC). Parts are pushed: a GPU's copy engines
/// write over NVLink at about 1.75x the rate they read (364 against 208 GB/s into each of 4 H200s,
/// benchmarks/cuda/copy_engine_probe.cu). One allgather of generation g, on the caller's stream:
///   1. copy this rank's part into its block of the result;
///   2. on one side stream per peer: wait until the peer has copied out what this rank pushed
///      into its slot g % slots two generations ago ("free" words); push the part into this
///      rank's block of the peer's slot; write g into the peer's "ready" word of this rank and
///      slot (fenced after the copy); wait for the peer's own "ready" word here to reach g; copy
///      its block out of this rank's slot into the result; write g into the peer's "free" word
///      of this rank. The caller's stream joins the side streams.
/// Ready words are per slot: a later generation's word must not stand for an earlier one still
/// in flight. Every rank calls run() for the same parts in the same order, as NCCL requires.
class CopyEngineAllgather {
 public:
  /// Every rank's bytes in rank order, from this rank's (the same length on every rank): an
  /// allgather over the ranks that waits for its result.
  using Exchange = std::function<std::vector<std::byte>(const std::vector<std::byte>&)>;

  /// Collective over the `size` ranks (rank `rank` here, on CUDA device `device`): allocates
  /// staging slots of at least `slot_bytes`, exchanges the memory handles through `exchange`
  /// and maps the peers'. When any rank cannot (ranks on different hosts, GPUs without peer
  /// access, no IPC), every rank gets null and `why_not` says which rank failed and why.
  static std::unique_ptr<CopyEngineAllgather> create(int64_t rank, int64_t size, int device,
                                                     size_t slot_bytes, const Exchange& exchange,
                                                     std::string& why_not);
  ~CopyEngineAllgather();
  CopyEngineAllgather(const CopyEngineAllgather&) = delete;
  CopyEngineAllgather& operator=(const CopyEngineAllgather&) = delete;

  /// Whether a part of `bytes` fits a staging slot.
  bool fits(size_t bytes) const { return bytes <= slot_bytes_; }
  size_t slotBytes() const { return slot_bytes_; }

  /// recv = every rank's `send` of `bytes` bytes, in rank order; enqueued on `stream` (of this
  /// rank's device, which must be current). Needs fits(bytes).
  void run(CUdeviceptr send, CUdeviceptr recv, size_t bytes, CUstream stream);

  /// Lets every wait on this rank's signal words pass, so that streams stuck on a dead peer's
  /// signal drain (the communicator calls it when it is aborted). Never throws.
  void release() noexcept;

 private:
  CopyEngineAllgather() = default;
  /// The address of peer `rank`'s signal word `word` (its own pad for this rank).
  CUdeviceptr signal(int64_t rank, int64_t word) const;
  /// A pad's words: "ready" of rank r's part pushed into slot s at s * size + r, then "free":
  /// rank r has copied this rank's part out of its slots up to that generation, at
  /// slots * size + r.
  static size_t padWords(int64_t size) { return static_cast<size_t>((kSlots + 1) * size); }
  int64_t readyWord(int64_t slot, int64_t rank) const { return slot * size_ + rank; }
  int64_t freeWord(int64_t rank) const { return kSlots * size_ + rank; }
  /// Where rank `source`'s part lands in slot `slot` of a staging area.
  CUdeviceptr blockOffset(int64_t slot, int64_t source) const {
    return static_cast<CUdeviceptr>(slot * size_ + source) * slot_bytes_;
  }
  void destroy() noexcept;

  static constexpr int64_t kSlots = 2;

  int64_t rank_ = 0;
  int64_t size_ = 1;
  int device_ = 0;
  size_t slot_bytes_ = 0;
  /// Generations run so far; the next run is generation_ + 1.
  std::atomic<uint32_t> generation_ = 0;
  /// This rank's staging slots (kSlots x size blocks of slot_bytes_) and signal pad
  /// (padWords), and every rank's as mapped here (this rank's own at its index).
  CUdeviceptr own_staging_ = 0;
  CUdeviceptr own_pad_ = 0;
  std::vector<CUdeviceptr> staging_;
  std::vector<CUdeviceptr> pads_;
  /// One side stream and join event per peer (none at this rank's index); the fork event.
  std::vector<CUstream> side_streams_;
  std::vector<CUevent> joins_;
  CUevent fork_ = nullptr;
  /// A stream of its own for release(), which must not queue behind the stuck ones.
  CUstream release_stream_ = nullptr;
  std::mutex release_mutex_;
};

}  // namespace braze::host
