// Braze runtime header: grid-wide reductions across the reduced block dims (GX, GY, GZ). Each
// block has already reduced its own threads (blockReduce); here every thread stores its value
// in the workspace, the last block of each group of blocks to arrive (counted on a semaphore)
// combines all of them, and only that block returns true and holds the result. The workspace
// must be zero when the kernel starts (the executor clears it) and holds one T per thread of
// the grid followed by one 64-bit semaphore per group of blocks.
#pragma once

namespace braze {

template <bool GX, bool GY, bool GZ>
__device__ __forceinline__ void gridCoordinates(unsigned long long& reduced,
                                                unsigned long long& group,
                                                unsigned long long& reduced_count) {
  reduced = 0;
  group = 0;
  reduced_count = 1;
  if (GZ) {
    reduced = reduced * gridDim.z + blockIdx.z;
    reduced_count *= gridDim.z;
  } else {
    group = group * gridDim.z + blockIdx.z;
  }
  if (GY) {
    reduced = reduced * gridDim.y + blockIdx.y;
    reduced_count *= gridDim.y;
  } else {
    group = group * gridDim.y + blockIdx.y;
  }
  if (GX) {
    reduced = reduced * gridDim.x + blockIdx.x;
    reduced_count *= gridDim.x;
  } else {
    group = group * gridDim.x + blockIdx.x;
  }
}

template <typename T>
__device__ __forceinline__ T loadCoherent(const T* p) {
  return *reinterpret_cast<const volatile T*>(p);
}
template <typename T>
__device__ __forceinline__ WelfordTriplet<T> loadCoherent(const WelfordTriplet<T>* p) {
  const volatile WelfordTriplet<T>* v = p;
  return {v->avg, v->m2, v->n};
}

// Bytes of one region of a grid reduction's workspace for this launch, as the executor sizes
// it: one `entry_bytes` slot and one semaphore per thread of the grid, plus 16. A grid
// reduction inside a serial loop uses one region per iteration.
__device__ __forceinline__ unsigned long long gridReduceRegionBytes(
    unsigned long long entry_bytes) {
  const unsigned long long slots = static_cast<unsigned long long>(blockDim.x) * blockDim.y *
                                   blockDim.z * gridDim.x * gridDim.y * gridDim.z;
  return slots * (entry_bytes + 8) + 16;
}

template <bool GX, bool GY, bool GZ, typename T, typename Op>
__device__ bool gridReduce(T& value, Op op, T identity, char* workspace) {
  const unsigned long long threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned long long blocks =
      static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned long long reduced, group, count;
  gridCoordinates<GX, GY, GZ>(reduced, group, count);
  T* partials = reinterpret_cast<T*>(workspace);
  const unsigned long long partial_bytes = (threads * blocks * sizeof(T) + 15) / 16 * 16;
  unsigned long long* semaphores = reinterpret_cast<unsigned long long*>(workspace + partial_bytes);

  partials[((group * count) + reduced) * threads + tid] = value;
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (tid == 0) last = atomicAdd(&semaphores[group], 1ULL) == count - 1;
  __syncthreads();
  if (!last) return false;
  __threadfence();
  // Eight scalar loads in flight at a time (one Welford triplet), added in the same order: one
  // dependent load after the other would leave the finishing block waiting on memory latency
  // `count` times.
  constexpr int kInFlight = sizeof(T) <= 8 ? 8 : 1;
  T result = identity;
  const T* mine = &partials[group * count * threads + tid];
  unsigned long long b = 0;
  for (; b + kInFlight <= count; b += kInFlight) {
    T part[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) part[k] = loadCoherent(&mine[(b + k) * threads]);
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) result = op(result, part[k]);
  }
  for (; b < count; ++b) result = op(result, loadCoherent(&mine[b * threads]));
  value = result;
  __syncthreads();
  if (tid == 0) semaphores[group] = 0;  // ready for the next launch with this workspace
  return true;
}

}  // namespace braze
