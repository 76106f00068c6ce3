// Braze runtime header: block-wide reductions. Every thread passes its value and every thread
// gets the reduction over the threads that differ only in the reduced dims (an all-reduce), so
// a later use of the result by any thread needs no broadcast.
//
// Reducing along x only, with blockDim.x a multiple of 32, takes warp shuffles and one round
// through shared memory; with blockDim.x a power of two below 32 (and whole warps), shuffles
// only; other shapes use a tree in shared memory. `smem` must hold one T per
// thread of the block, and at least 8 bytes per thread for blockReduceGroup. Every thread of the
// block must call it (it synchronizes).
#pragma once

namespace braze {

// The block's dims where the kernel was compiled for them (0: read blockDim at run time). Known,
// the reductions' tests of the shape fold and their loops over warps unroll: layer norm
// backward's row loop took half the instructions.
template <unsigned X = 0, unsigned Y = 0, unsigned Z = 0>
struct BlockShape {
  static __device__ __forceinline__ unsigned x() { return X != 0 ? X : blockDim.x; }
  static __device__ __forceinline__ unsigned y() { return Y != 0 ? Y : blockDim.y; }
  static __device__ __forceinline__ unsigned z() { return Z != 0 ? Z : blockDim.z; }
};

// The block reductions' scratch in shared memory, typed with the dims the kernel was compiled
// for: generated kernels pass it where a reduction takes `smem`, and the reductions below take
// the shape from it.
template <unsigned X, unsigned Y, unsigned Z>
struct BlockScratch {
  void* bytes;
  __device__ operator void*() const { return bytes; }
};

// The shape a reduction's scratch carries: a BlockScratch's dims, none for a plain pointer.
template <typename Scratch>
struct ShapeOf {
  using type = BlockShape<>;
};
template <unsigned X, unsigned Y, unsigned Z>
struct ShapeOf<BlockScratch<X, Y, Z>> {
  using type = BlockShape<X, Y, Z>;
};

// Linear index of the thread among those that reduce together, and of its group.
template <bool RX, bool RY, bool RZ, typename Shape = BlockShape<>>
__device__ __forceinline__ void reductionCoordinates(unsigned& reduced, unsigned& group,
                                                     unsigned& reduced_count) {
  reduced = 0;
  group = 0;
  reduced_count = 1;
  unsigned group_count = 1;
  if (RZ) {
    reduced = reduced * Shape::z() + threadIdx.z;
    reduced_count *= Shape::z();
  } else {
    group = group * Shape::z() + threadIdx.z;
    group_count *= Shape::z();
  }
  if (RY) {
    reduced = reduced * Shape::y() + threadIdx.y;
    reduced_count *= Shape::y();
  } else {
    group = group * Shape::y() + threadIdx.y;
    group_count *= Shape::y();
  }
  if (RX) {
    reduced = reduced * Shape::x() + threadIdx.x;
    reduced_count *= Shape::x();
  } else {
    group = group * Shape::x() + threadIdx.x;
    group_count *= Shape::x();
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

template <bool RX, bool RY, bool RZ, typename Shape, typename T, typename Op>
__device__ T blockReduceShaped(T value, Op op, T identity, void* smem_raw) {
  T* smem = reinterpret_cast<T*>(smem_raw);
  // Rows of fewer than 32 threads (a power of two) in whole warps: each row is an aligned group
  // of lanes of one warp, so shuffles alone reduce it (several short rows per block).
  const unsigned threads = Shape::x() * Shape::y() * Shape::z();
  if (RX && !RY && !RZ && Shape::x() < 32 && (Shape::x() & (Shape::x() - 1)) == 0 &&
      threads % 32 == 0) {
    return warpAllReduce(value, op, Shape::x());
  }
  if (RX && !RY && !RZ && Shape::x() % 32 == 0) {
    value = warpAllReduce(value, op);
    const unsigned warps = Shape::x() / 32;
    if (warps == 1) return value;
    const unsigned row = threadIdx.y + Shape::y() * threadIdx.z;
    if (threadIdx.x % 32 == 0) smem[row * warps + threadIdx.x / 32] = value;
    __syncthreads();
    T result = identity;
    // Four loads in flight, not every warp's: unrolled whole for a known block, the loads
    // took the registers of kernels held at 64 (RMS norm backward fp32 spilled 92 bytes).
#pragma unroll 4
    for (unsigned w = 0; w < warps; ++w) result = op(result, smem[row * warps + w]);
    __syncthreads();  // the next reduction reuses smem
    return result;
  }
  unsigned reduced, group, count;
  reductionCoordinates<RX, RY, RZ, Shape>(reduced, group, count);
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
// block meets at two barriers instead of 2 N. Other shapes take the values a few at a time.
// `smem` holds 8 bytes per thread (and at least one T; N values per warp for N <= 32).
template <bool RX, bool RY, bool RZ, int N, typename Shape, typename T, typename Op>
__device__ void blockReduceGroupShaped(T (&values)[N], Op op, T identity, void* smem_raw) {
  static_assert(N >= 1 && N <= 32, "blockReduceGroup takes 1 to 32 values");
  const unsigned threads = Shape::x() * Shape::y() * Shape::z();
  if (RX && !RY && !RZ && Shape::x() < 32 && (Shape::x() & (Shape::x() - 1)) == 0 &&
      threads % 32 == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) values[i] = warpAllReduce(values[i], op, Shape::x());
    return;
  }
  if (RX && !RY && !RZ && Shape::x() % 32 == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) values[i] = warpAllReduce(values[i], op);
    const unsigned warps = Shape::x() / 32;
    if (warps == 1) return;
    T* smem = reinterpret_cast<T*>(smem_raw);
    const unsigned row = threadIdx.y + Shape::y() * threadIdx.z;
    T* mine = smem + row * warps * N;
    if (threadIdx.x % 32 == 0) {
#pragma unroll
      for (int i = 0; i < N; ++i) mine[(threadIdx.x / 32) * N + i] = values[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i) {
      T result = identity;
#pragma unroll 4
      for (unsigned w = 0; w < warps; ++w) result = op(result, mine[w * N + i]);
      values[i] = result;
    }
    __syncthreads();  // the next reduction reuses smem
    return;
  }
  // Other shapes (a column partial's elements over threadIdx.y): a round stages as many values
  // as the scratch holds (8 bytes a thread), then each thread adds up its group's copies itself
  // (a tree for groups over 32): two barriers a round, where a reduction per value took
  // 2 + log2(group) barriers each, and inlined N times, a sixth of a norm backward's code.
  unsigned reduced, group, count;
  reductionCoordinates<RX, RY, RZ, Shape>(reduced, group, count);
  constexpr int kAtOnce = sizeof(T) <= 4 ? 2 : 1;
  T* smem = reinterpret_cast<T*>(smem_raw);
#pragma unroll
  for (int base = 0; base < N; base += kAtOnce) {
#pragma unroll
    for (int i = 0; i < kAtOnce && base + i < N; ++i)
      smem[i * threads + group * count + reduced] = values[base + i];
    __syncthreads();
    if (count > 32) {
      unsigned half = 1;
      while (half < count) half *= 2;
      for (half /= 2; half > 0; half /= 2) {
        if (reduced < half && reduced + half < count) {
#pragma unroll
          for (int i = 0; i < kAtOnce && base + i < N; ++i) {
            T* mine = smem + i * threads + group * count;
            mine[reduced] = op(mine[reduced], mine[reduced + half]);
          }
        }
        __syncthreads();
      }
#pragma unroll
      for (int i = 0; i < kAtOnce && base + i < N; ++i)
        values[base + i] = smem[i * threads + group * count];
    } else {
#pragma unroll
      for (int i = 0; i < kAtOnce && base + i < N; ++i) {
        const T* mine = smem + i * threads + group * count;
        T result = identity;
#pragma unroll 4
        for (unsigned r = 0; r < count; ++r) result = op(result, mine[r]);
        values[base + i] = result;
      }
    }
    __syncthreads();  // the next round (or reduction) reuses smem
  }
}

// The reductions for a block whose dims are read at run time (`smem` a pointer), or, with the
// scratch of a kernel compiled for its block's dims, for those.
template <bool RX, bool RY, bool RZ, typename T, typename Op>
__device__ __forceinline__ T blockReduce(T value, Op op, T identity, void* smem) {
  return blockReduceShaped<RX, RY, RZ, BlockShape<>>(value, op, identity, smem);
}
template <bool RX, bool RY, bool RZ, unsigned X, unsigned Y, unsigned Z, typename T, typename Op>
__device__ __forceinline__ T blockReduce(T value, Op op, T identity, BlockScratch<X, Y, Z> smem) {
  return blockReduceShaped<RX, RY, RZ, BlockShape<X, Y, Z>>(value, op, identity, smem.bytes);
}
template <bool RX, bool RY, bool RZ, int N, typename T, typename Op>
__device__ __forceinline__ void blockReduceGroup(T (&values)[N], Op op, T identity, void* smem) {
  blockReduceGroupShaped<RX, RY, RZ, N, BlockShape<>>(values, op, identity, smem);
}
template <bool RX, bool RY, bool RZ, int N, unsigned X, unsigned Y, unsigned Z, typename T,
          typename Op>
__device__ __forceinline__ void blockReduceGroup(T (&values)[N], Op op, T identity,
                                                 BlockScratch<X, Y, Z> smem) {
  blockReduceGroupShaped<RX, RY, RZ, N, BlockShape<X, Y, Z>>(values, op, identity, smem.bytes);
}

}  // namespace braze
