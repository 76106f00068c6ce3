// Braze runtime header: thread block clusters, sm_90. The CTAs of a cluster (launched with
// LaunchParams::cluster) run at the same time on one GPU processing cluster, synchronize with
// a cluster barrier and read and write each other's shared memory (distributed shared memory).
#pragma once

namespace braze {
namespace cluster {

// This CTA's rank in its cluster, 0 to ctaCount() - 1.
__device__ __forceinline__ unsigned ctaRank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// The number of CTAs in the cluster.
__device__ __forceinline__ unsigned ctaCount() {
  unsigned count;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(count));
  return count;
}

// The cluster's shape in CTAs.
__device__ __forceinline__ uint3 dims() {
  uint3 shape;
  asm volatile(
      "mov.u32 %0, %%cluster_nctaid.x;\n"
      "mov.u32 %1, %%cluster_nctaid.y;\n"
      "mov.u32 %2, %%cluster_nctaid.z;\n"
      : "=r"(shape.x), "=r"(shape.y), "=r"(shape.z));
  return shape;
}

// This CTA's coordinates within the cluster.
__device__ __forceinline__ uint3 ctaIndex() {
  uint3 index;
  asm volatile(
      "mov.u32 %0, %%cluster_ctaid.x;\n"
      "mov.u32 %1, %%cluster_ctaid.y;\n"
      "mov.u32 %2, %%cluster_ctaid.z;\n"
      : "=r"(index.x), "=r"(index.y), "=r"(index.z));
  return index;
}

// Arrives at the cluster barrier with release semantics: this thread's earlier writes
// (including to other CTAs' shared memory) are visible to threads after their wait().
__device__ __forceinline__ void arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}

// Arrives without ordering memory: for a barrier that only says "my CTA has started", before
// a peer may touch this CTA's shared memory.
__device__ __forceinline__ void arriveRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

// Waits until every thread of every CTA in the cluster has arrived (acquire semantics).
__device__ __forceinline__ void wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// arrive() then wait(): a full cluster barrier. Also needed before a CTA exits while peers may
// still access its shared memory.
__device__ __forceinline__ void sync() {
  arrive();
  wait();
}

// The shared::cluster address of `pointer` (this CTA's shared memory) in CTA `cta_rank`'s
// shared memory: the same offset, in the peer's window.
__device__ __forceinline__ unsigned mapShared(const void* pointer, unsigned cta_rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(sharedAddress(pointer)), "r"(cta_rank));
  return remote;
}

// Reads and writes a 32-bit word at a shared::cluster address (from mapShared).
__device__ __forceinline__ unsigned loadShared(unsigned cluster_address) {
  unsigned value;
  asm volatile("ld.shared::cluster.u32 %0, [%1];\n"
               : "=r"(value)
               : "r"(cluster_address)
               : "memory");
  return value;
}

// Reads four consecutive floats (16-byte aligned) at a shared::cluster address: how a CTA
// gathers a peer's partial results in one access per thread.
__device__ __forceinline__ float4 loadShared4(unsigned cluster_address) {
  float4 value;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(value.x), "=f"(value.y), "=f"(value.z), "=f"(value.w)
               : "r"(cluster_address)
               : "memory");
  return value;
}

__device__ __forceinline__ void storeShared(unsigned cluster_address, unsigned value) {
  asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(cluster_address), "r"(value) : "memory");
}

}  // namespace cluster
}  // namespace braze
