// Braze runtime header: shared-memory barriers (mbarrier), named barriers and proxy fences,
// sm_90. The synchronization the asynchronous copy engine and the tensor cores need; see
// HOPPER_LOWERING.md beside this file for how kernels compose them.
#pragma once

namespace braze {

// The 32-bit shared-window address PTX's shared::cta operands take. Every asynchronous
// operation names shared memory this way; a generic pointer would cost a conversion per use.
__device__ __forceinline__ unsigned sharedAddress(const void* pointer) {
  unsigned address;
  asm("{\n"
      "  .reg .u64 a;\n"
      "  cvta.to.shared.u64 a, %1;\n"
      "  cvt.u32.u64 %0, a;\n"
      "}\n"
      : "=r"(address)
      : "l"(pointer));
  return address;
}

// An mbarrier is 8 bytes of shared memory (8-byte aligned) counting two things per phase:
// arrivals (threads that said they are done) and transaction bytes (what the copy engine still
// has to deliver). A phase completes when both reach zero; waiters name the phase by its
// parity (0, 1, 0, ...), so a ring slot's consumer waits for parity `round & 1`.
namespace mbarrier {

// Sets the expected arrivals of every phase to `arrivals`. One thread initializes, then
// fenceInit() and a block barrier (cluster barrier when other CTAs use it) publish it.
__device__ __forceinline__ void init(unsigned long long* barrier, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(sharedAddress(barrier)),
               "r"(arrivals)
               : "memory");
}

// Makes initialized barriers visible to the async proxy (the copy engine) and to the other
// CTAs of the cluster: without it, a copy may signal a barrier whose init it has not seen.
__device__ __forceinline__ void fenceInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Ends the barrier's life, so its 8 bytes can hold other data.
__device__ __forceinline__ void invalidate(unsigned long long* barrier) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(sharedAddress(barrier)) : "memory");
}

// One arrival (release semantics for this CTA).
__device__ __forceinline__ void arrive(unsigned long long* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(sharedAddress(barrier))
               : "memory");
}

// One arrival on the barrier at the same offset in the shared memory of CTA `cta_rank` of the
// cluster: how a consumer frees a slot that a multicast copy from another CTA fills. Release at
// CTA scope (the instruction's default): what it orders are this CTA's reads of the slot, which
// are complete by then; cluster scope would cost a MEMBAR.ALL.GPU per arrival, which waits for
// the warp's wgmma in flight.
__device__ __forceinline__ void arriveCluster(unsigned long long* barrier, unsigned cta_rank) {
  asm volatile(
      "{\n"
      "  .reg .b32 remote;\n"
      "  mapa.shared::cluster.u32 remote, %0, %1;\n"
      "  mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(sharedAddress(barrier)),
      "r"(cta_rank)
      : "memory");
}

// One arrival that also announces `bytes` more transaction bytes for this phase: what the
// thread issuing a bulk copy does before the copy, so the phase cannot complete early.
__device__ __forceinline__ void arriveExpectTx(unsigned long long* barrier, unsigned bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(sharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}

// Announces `bytes` more transaction bytes without arriving (several copies, one arrival).
__device__ __forceinline__ void expectTx(unsigned long long* barrier, unsigned bytes) {
  asm volatile(
      "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(sharedAddress(barrier)),
      "r"(bytes)
      : "memory");
}

// True when the phase of parity `parity` has completed. try_wait (unlike test_wait) lets the
// hardware suspend the thread for a while before answering, so a spin loop on it is cheap.
// Acquire semantics at CTA scope: data the phase guarded is visible after a true answer.
__device__ __forceinline__ bool tryWait(unsigned long long* barrier, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(sharedAddress(barrier)), "r"(parity)
      : "memory");
  return done != 0;
}

// As tryWait, with acquire semantics at cluster scope: for phases that other CTAs' arrivals
// (arriveCluster) complete.
__device__ __forceinline__ bool tryWaitCluster(unsigned long long* barrier, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(sharedAddress(barrier)), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase of parity `parity` has completed.
__device__ __forceinline__ void wait(unsigned long long* barrier, unsigned parity) {
  while (!tryWait(barrier, parity)) {
  }
}

__device__ __forceinline__ void waitCluster(unsigned long long* barrier, unsigned parity) {
  while (!tryWaitCluster(barrier, parity)) {
  }
}

}  // namespace mbarrier

// Named barriers 1..15 (0 is __syncthreads') synchronize a subset of the block, e.g. the
// consumer warp groups of a warp-specialized kernel without the producer. `threads` is a
// multiple of 32, the same in every call on that id.
__device__ __forceinline__ void namedBarrierSync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrives at named barrier `id` without waiting: the signalling side of a producer/consumer
// hand-off through a named barrier.
__device__ __forceinline__ void namedBarrierArrive(unsigned id, unsigned threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Orders this thread's ordinary (generic proxy) shared-memory accesses before later accesses
// of the async proxy (bulk copies, wgmma operands), and the reverse. Needed, for example,
// after writing an epilogue tile with st.shared or stmatrix and before the barrier that lets
// one thread store it with a bulk tensor copy.
__device__ __forceinline__ void fenceProxyAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// As fenceProxyAsyncShared, for global memory (a kernel that writes with st.global what a
// bulk copy then reads).
__device__ __forceinline__ void fenceProxyAsyncGlobal() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// As fenceProxyAsyncShared, for every state space.
__device__ __forceinline__ void fenceProxyAsync() {
  asm volatile("fence.proxy.async;\n" ::: "memory");
}

}  // namespace braze
