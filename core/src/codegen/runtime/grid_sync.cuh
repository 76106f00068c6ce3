// Braze runtime header: a grid-wide barrier for kernels whose blocks are all resident at once
// (launched cooperatively), on a counter in zeroed global memory. Grid reductions finish
// across blocks with it; kernel templates that combine their blocks' partials at the end (a
// normalization's column sums) name it on its own, without the reductions.
#pragma once

namespace braze {

// Counts this block on `counter` once its writes are visible to the grid. Every thread of the
// block must call it.
__device__ __forceinline__ void arrive(unsigned long long* counter, unsigned tid) {
  __threadfence();
  __syncthreads();
  if (tid == 0) atomicAdd(counter, 1ULL);
}

// Waits until `count` blocks have arrived on `counter`; their writes are visible after it. Only
// for blocks that are all resident at once (a cooperative launch): a block waiting here would
// otherwise keep the ones it waits for from starting. Every thread of the block must call it.
__device__ __forceinline__ void waitForArrivals(unsigned long long* counter,
                                                unsigned long long count, unsigned tid) {
  if (tid == 0) {
    while (*reinterpret_cast<volatile unsigned long long*>(counter) < count) __nanosleep(32);
  }
  __syncthreads();
  __threadfence();
}

}  // namespace braze
