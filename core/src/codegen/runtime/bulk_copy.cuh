// Braze runtime header: bulk copies between global and shared memory through the copy engine
// (TMA), sm_90. Tensor copies move one box of a tensor map; 1-D copies move a contiguous run
// of bytes. Loads complete on an mbarrier (mbarrier.cuh), stores in bulk groups.
#pragma once

namespace braze {

// A tensor map made on the host (braze/driver/tensor_map.h). Kernels take it as
// `const __grid_constant__ braze::TensorMap` so it stays in the parameter space, where the
// copy engine reads it: a copy into registers or local memory would be a different object
// with a generic address the engine cannot use.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

namespace tma {

// Fetches the tensor map into the descriptor cache ahead of the first copy (one thread, at
// kernel start), hiding a global-memory round trip.
__device__ __forceinline__ void prefetchTensorMap(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

// Loads the box at coordinates (c0 innermost, c1, ...) of `map` into `destination` (shared,
// 128-byte aligned, 1024 for a 128-byte swizzle), signalling the box's bytes on `barrier`.
// Elements outside the tensor are filled as the map says (zeros, or NaN for the tensor
// cores). Issued by one thread, after arriveExpectTx on `barrier` with the box's bytes.
__device__ __forceinline__ void load(void* destination, const TensorMap* map,
                                     unsigned long long* barrier, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3}], [%2];\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "r"(c0)
      : "memory");
}

__device__ __forceinline__ void load(void* destination, const TensorMap* map,
                                     unsigned long long* barrier, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void load(void* destination, const TensorMap* map,
                                     unsigned long long* barrier, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void load(void* destination, const TensorMap* map,
                                     unsigned long long* barrier, int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

__device__ __forceinline__ void load(void* destination, const TensorMap* map,
                                     unsigned long long* barrier, int c0, int c1, int c2, int c3,
                                     int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// As load, but the box lands at the same shared-memory offset (and signals the barrier at the
// same offset) in every CTA of the cluster whose rank has its bit set in `cta_mask`: one read
// of global memory feeds several CTAs that share an operand tile. sm_90a.
__device__ __forceinline__ void loadMulticast(void* destination, const TensorMap* map,
                                              unsigned long long* barrier, unsigned short cta_mask,
                                              int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void loadMulticast(void* destination, const TensorMap* map,
                                              unsigned long long* barrier, unsigned short cta_mask,
                                              int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;\n" ::"r"(sharedAddress(destination)),
      "l"(map), "r"(sharedAddress(barrier)), "h"(cta_mask), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Stores `source` (shared, written before by this CTA) to the box at (c0, ...) of `map`; the
// part of the box outside the tensor is not written, which is how tail tiles stay in bounds.
// The writes to `source` must be ordered before by fenceProxyAsyncShared() and a barrier.
// Completion: commitGroup(), then waitGroupRead<0>() before reusing `source`, or
// waitGroup<0>() before the kernel relies on the global writes.
__device__ __forceinline__ void store(const TensorMap* map, const void* source, int c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];\n" ::"l"(map),
      "r"(sharedAddress(source)), "r"(c0)
      : "memory");
}

__device__ __forceinline__ void store(const TensorMap* map, const void* source, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(map),
      "r"(sharedAddress(source)), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void store(const TensorMap* map, const void* source, int c0, int c1,
                                      int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          map),
      "r"(sharedAddress(source)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void store(const TensorMap* map, const void* source, int c0, int c1,
                                      int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
          map),
      "r"(sharedAddress(source)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

__device__ __forceinline__ void store(const TensorMap* map, const void* source, int c0, int c1,
                                      int c2, int c3, int c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group"
      " [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(map),
      "r"(sharedAddress(source)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// Loads `bytes` (a multiple of 16) from `source` (global, 16-byte aligned) to `destination`
// (shared, 16-byte aligned), signalling `barrier` with the bytes: rows of a normalization, or
// anything contiguous that needs no tensor map.
__device__ __forceinline__ void loadBytes(void* destination, const void* source, unsigned bytes,
                                          unsigned long long* barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(sharedAddress(destination)),
      "l"(source), "r"(bytes), "r"(sharedAddress(barrier))
      : "memory");
}

// Stores `bytes` (a multiple of 16) from `source` (shared) to `destination` (global), both
// 16-byte aligned; completes in bulk groups like store.
__device__ __forceinline__ void storeBytes(void* destination, const void* source, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(destination),
               "r"(sharedAddress(source)), "r"(bytes)
               : "memory");
}

// Closes the group of bulk stores this thread issued since the last commit.
__device__ __forceinline__ void commitGroup() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most `kPending` committed groups of this thread are still writing global
// memory.
template <int kPending>
__device__ __forceinline__ void waitGroup() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Waits until at most `kPending` committed groups still read their shared-memory source: the
// source may be overwritten after this, while the global writes may still be in flight.
template <int kPending>
__device__ __forceinline__ void waitGroupRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

}  // namespace tma
}  // namespace braze
