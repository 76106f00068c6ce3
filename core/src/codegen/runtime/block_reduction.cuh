// Braze runtime header: block-wide reductions. Every thread passes its value and every thread
// gets the reduction over the threads that differ only in the reduced dims (an all-reduce), so
// a later use of the result by any thread needs no broadcast.
//
// Reducing along x only, with blockDim.x a multiple of 32, takes warp shuffles and one round
// through shared memory; with blockDim.x a power of two below 32 (and whole warps), shuffles
// only; other shapes use a tree in shared memory. `smem` must hold one T per
// thread of the block. Every thread of the block must call it (it synchronizes).
#pragma once

namespace braze {

// Linear index of the thread among those that reduce together, and of its group.
template <bool RX, bool RY, bool RZ>
__device__ __forceinline__ void reductionCoordinates(unsigned& reduced, unsigned& group,
                                                     unsigned& reduced_count) {
  reduced = 0;
  group = 0;
  reduced_count = 1;
  unsigned group_count = 1;
  if (RZ) {
    reduced = reduced * blockDim.z + threadIdx.z;
    reduced_count *= blockDim.z;
  } else {
    group = group * blockDim.z + threadIdx.z;
    group_count *= blockDim.z;
  }
  if (RY) {
    reduced = reduced * blockDim.y + threadIdx.y;
    reduced_count *= blockDim.y;
  } else {
    group = group * blockDim.y + threadIdx.y;
    group_count *= blockDim.y;
  }
  if (RX) {
    reduced = reduced * blockDim.x + threadIdx.x;
    reduced_count *= blockDim.x;
  } else {
    group = group * blockDim.x + threadIdx.x;
    group_count *= blockDim.x;
  }
  (void)group_count;
}

// Reduces over aligned groups of `lanes` lanes (a power of two, at most 32) of a full warp.
template <typename T, typename Op>
__device__ __forceinline__ T warpAllReduce(T value, Op op, unsigned lanes = 32) {
  for (int offset = lanes / 2; offset > 0; offset /= 2) {
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
}

template <bool RX, bool RY, bool RZ, typename T, typename Op>
__device__ T blockReduce(T value, Op op, T identity, void* smem_raw) {
  T* smem = reinterpret_cast<T*>(smem_raw);
  // Rows of fewer than 32 threads (a power of two) in whole warps: each row is an aligned group
  // of lanes of one warp, so shuffles alone reduce it (several short rows per block).
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  if (RX && !RY && !RZ && blockDim.x < 32 && (blockDim.x & (blockDim.x - 1)) == 0 &&
      threads % 32 == 0) {
    return warpAllReduce(value, op, blockDim.x);
  }
  if (RX && !RY && !RZ && blockDim.x % 32 == 0) {
    value = warpAllReduce(value, op);
    const unsigned warps = blockDim.x / 32;
    if (warps == 1) return value;
    const unsigned row = threadIdx.y + blockDim.y * threadIdx.z;
    if (threadIdx.x % 32 == 0) smem[row * warps + threadIdx.x / 32] = value;
    __syncthreads();
    T result = identity;
    for (unsigned w = 0; w < warps; ++w) result = op(result, smem[row * warps + w]);
    __syncthreads();  // the next reduction reuses smem
    return result;
  }
  unsigned reduced, group, count;
  reductionCoordinates<RX, RY, RZ>(reduced, group, count);
  T* mine = smem + group * count;
  mine[reduced] = value;
  __syncthreads();
  unsigned half = 1;
  while (half < count) half *= 2;
  for (half /= 2; half > 0; half /= 2) {
    if (reduced < half && reduced + half < count) mine[reduced] = op(mine[reduced], mine[reduced + half]);
    __syncthreads();
  }
  const T result = mine[0];
  __syncthreads();
  return result;
}

// N independent block reductions of the same op over the same thread dims at once (a row's
// sum(dy * w) and sum(dy * w * xhat) in layer norm backward): reducing along x in whole warps,
// each value takes its warp shuffles, then one round through shared memory carries all N, so the
// block meets at two barriers instead of 2 N. Other shapes reduce the values one at a time.
// `smem` as for blockReduce (it holds N values per warp for N <= 32).
template <bool RX, bool RY, bool RZ, int N, typename T, typename Op>
__device__ void blockReduceGroup(T (&values)[N], Op op, T identity, void* smem_raw) {
  static_assert(N >= 1 && N <= 32, "blockReduceGroup takes 1 to 32 values");
  if (RX && !RY && !RZ && blockDim.x % 32 == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) values[i] = warpAllReduce(values[i], op);
    const unsigned warps = blockDim.x / 32;
    if (warps == 1) return;
    T* smem = reinterpret_cast<T*>(smem_raw);
    const unsigned row = threadIdx.y + blockDim.y * threadIdx.z;
    T* mine = smem + row * warps * N;
    if (threadIdx.x % 32 == 0) {
#pragma unroll
      for (int i = 0; i < N; ++i) mine[(threadIdx.x / 32) * N + i] = values[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i) {
      T result = identity;
      for (unsigned w = 0; w < warps; ++w) result = op(result, mine[w * N + i]);
      values[i] = result;
    }
    __syncthreads();  // the next reduction reuses smem
    return;
  }
#pragma unroll
  for (int i = 0; i < N; ++i) values[i] = blockReduce<RX, RY, RZ>(values[i], op, identity, smem_raw);
}

}  // namespace braze
