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

// The semaphores of a workspace region: after one T per thread of the grid, 16-byte aligned.
template <typename T>
__device__ __forceinline__ unsigned long long* gridSemaphores(char* workspace,
                                                              unsigned long long slots) {
  return reinterpret_cast<unsigned long long*>(workspace + (slots * sizeof(T) + 15) / 16 * 16);
}

// Counts this block on its group's semaphore once its partials are visible to the grid; true
// in the last block of the group to arrive, which may then read every block's partials. Every
// thread of the block must call it.
__device__ __forceinline__ bool arriveLast(unsigned long long* semaphore, unsigned long long count,
                                           unsigned tid) {
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (tid == 0) last = atomicAdd(semaphore, 1ULL) == count - 1;
  __syncthreads();
  if (!last) return false;
  __threadfence();
  return true;
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
  unsigned long long* semaphores = gridSemaphores<T>(workspace, threads * blocks);

  partials[((group * count) + reduced) * threads + tid] = value;
  if (!arriveLast(&semaphores[group], count, tid)) return false;
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

// A grid reduction of a value that a block reduction over the thread dims (BX, BY, BZ) has
// just made the same in every thread of those dims (blockReduce is an all-reduce). The copies
// are not stored again: only the first thread of the reduced dims stores the block's value, and
// in the finishing block the copies share the loads instead (the thread at position k of the
// reduced dims adds blocks k, k + copies, ...), then one block reduction over the same dims
// combines their sums. Rows of a few hundred blocks then take a few loads per thread, not one
// load per block. Same workspace layout and size as above; `smem` as for blockReduce.
template <bool GX, bool GY, bool GZ, bool BX, bool BY, bool BZ, typename T, typename Op,
          typename Scratch>
__device__ bool gridReduce(T& value, Op op, T identity, char* workspace, Scratch smem) {
  using Shape = typename ShapeOf<Scratch>::type;
  const unsigned long long threads = Shape::x() * Shape::y() * Shape::z();
  const unsigned long long blocks =
      static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  const unsigned tid = threadIdx.x + Shape::x() * (threadIdx.y + Shape::y() * threadIdx.z);
  unsigned copy, kept, copies;
  reductionCoordinates<BX, BY, BZ, Shape>(copy, kept, copies);
  const unsigned long long kept_threads = threads / copies;
  unsigned long long reduced, group, count;
  gridCoordinates<GX, GY, GZ>(reduced, group, count);
  T* partials = reinterpret_cast<T*>(workspace);
  unsigned long long* semaphores = gridSemaphores<T>(workspace, threads * blocks);

  if (copy == 0) partials[((group * count) + reduced) * kept_threads + kept] = value;
  if (!arriveLast(&semaphores[group], count, tid)) return false;
  constexpr int kInFlight = sizeof(T) <= 8 ? 8 : 1;
  T result = identity;
  const T* mine = &partials[group * count * kept_threads + kept];
  unsigned long long b = copy;
  for (; b + (kInFlight - 1) * copies < count; b += kInFlight * copies) {
    T part[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      part[k] = loadCoherent(&mine[(b + k * copies) * kept_threads]);
#pragma unroll
    for (int k = 0; k < kInFlight; ++k) result = op(result, part[k]);
  }
  for (; b < count; b += copies) result = op(result, loadCoherent(&mine[b * kept_threads]));
  value = blockReduceShaped<BX, BY, BZ, Shape>(result, op, identity, static_cast<void*>(smem));
  __syncthreads();
  if (tid == 0) semaphores[group] = 0;  // ready for the next launch with this workspace
  return true;
}

// N independent grid reductions at once (one per register element of a column partial), each
// through its own region of the workspace (element i at workspace + i * region_bytes, laid out
// as above): every block stores its N values and is counted once, on region 0's semaphore, and
// the finishing block loads the N partials of a block together, so the blocks meet once instead
// of N times and the finishing loads overlap. Each value must already be the same in every
// thread of the block-reduced dims (BX, BY, BZ), as for the gridReduce above; `smem` as for
// blockReduce (unused without block-reduced dims).
template <bool GX, bool GY, bool GZ, bool BX, bool BY, bool BZ, int N, typename T, typename Op,
          typename Scratch>
__device__ bool gridReduceGroup(T (&values)[N], Op op, T identity, char* workspace,
                                unsigned long long region_bytes, Scratch smem) {
  using Shape = typename ShapeOf<Scratch>::type;
  const unsigned long long threads = Shape::x() * Shape::y() * Shape::z();
  const unsigned long long blocks =
      static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  const unsigned tid = threadIdx.x + Shape::x() * (threadIdx.y + Shape::y() * threadIdx.z);
  unsigned copy, kept, copies;
  reductionCoordinates<BX, BY, BZ, Shape>(copy, kept, copies);
  const unsigned long long kept_threads = threads / copies;
  unsigned long long reduced, group, count;
  gridCoordinates<GX, GY, GZ>(reduced, group, count);
  unsigned long long* semaphores = gridSemaphores<T>(workspace, threads * blocks);

  if (copy == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      T* partials = reinterpret_cast<T*>(workspace + i * region_bytes);
      partials[((group * count) + reduced) * kept_threads + kept] = values[i];
    }
  }
  if (!arriveLast(&semaphores[group], count, tid)) return false;
  T result[N];
#pragma unroll
  for (int i = 0; i < N; ++i) result[i] = identity;
#pragma unroll 2
  for (unsigned long long b = copy; b < count; b += copies) {
    T part[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const T* partials = reinterpret_cast<const T*>(workspace + i * region_bytes);
      part[i] = loadCoherent(&partials[((group * count) + b) * kept_threads + kept]);
    }
#pragma unroll
    for (int i = 0; i < N; ++i) result[i] = op(result[i], part[i]);
  }
  if constexpr ((BX || BY || BZ) && N <= 32) {
    blockReduceGroupShaped<BX, BY, BZ, N, Shape>(result, op, identity, static_cast<void*>(smem));
  } else if constexpr (BX || BY || BZ) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      result[i] = blockReduceShaped<BX, BY, BZ, Shape>(result[i], op, identity,
                                                       static_cast<void*>(smem));
  }
#pragma unroll
  for (int i = 0; i < N; ++i) values[i] = result[i];
  __syncthreads();
  if (tid == 0) semaphores[group] = 0;  // ready for the next launch with this workspace
  return true;
}

// gridReduceGroup for kernels whose blocks are all resident at once (launched cooperatively:
// Fusion::setCooperativeLaunch). The last-block scheme above leaves one SM reading every
// block's partials while the others sit idle: for a layer norm backward's two column sums of
// rows of 4096 on 132 SMs that is 4.3 MB through one SM, tens of microseconds at the end of
// the kernel. Here the blocks of a group meet at a grid barrier instead, and each finishes
// its share of the N x (kept threads) sums: a warp's lanes take consecutive sums (their
// partials are adjacent in the workspace), the warps of the block split the blocks' partials
// of them, and shared memory adds the warps' sums. The group's block 0 waits until every share
// is done and returns true with the totals, like the finishing block above. Same workspace
// layout and size as gridReduceGroup: the two counters of each group sit in region 0's
// semaphores, the finished sums of region i after them in region i (room checked below).
template <bool GX, bool GY, bool GZ, bool BX, bool BY, bool BZ, int N, typename T, typename Op,
          typename Scratch>
__device__ bool gridReduceGroupResident(T (&values)[N], Op op, T identity, char* workspace,
                                        unsigned long long region_bytes, Scratch smem) {
  static_assert(sizeof(T) <= 8, "resident grid reductions hold one T per semaphore slot");
  using Shape = typename ShapeOf<Scratch>::type;
  const unsigned long long threads = Shape::x() * Shape::y() * Shape::z();
  const unsigned long long blocks =
      static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  unsigned long long reduced, group, count;
  gridCoordinates<GX, GY, GZ>(reduced, group, count);
  // One block per group, or blocks of one thread: the region has no room for the finished sums
  // beside the counters, and the last-block scheme is as fast.
  if (count < 2 || threads < 2)
    return gridReduceGroup<GX, GY, GZ, BX, BY, BZ, N>(values, op, identity, workspace, region_bytes,
                                                      smem);
  const unsigned tid = threadIdx.x + Shape::x() * (threadIdx.y + Shape::y() * threadIdx.z);
  unsigned copy, kept, copies;
  reductionCoordinates<BX, BY, BZ, Shape>(copy, kept, copies);
  const unsigned long long kept_threads = threads / copies;
  const unsigned long long slots = threads * blocks;
  const unsigned long long groups = blocks / count;
  unsigned long long* counters = gridSemaphores<T>(workspace, slots) + 2 * group;
  // Region i's finished sums: after its first 2 * groups semaphore slots, one T per kept thread
  // of each group. 16 + 8 * kept_threads <= 8 * count * threads for count, threads >= 2, so they
  // fit in the region's semaphore slots.
  const auto finished = [&](int i) {
    return reinterpret_cast<T*>(gridSemaphores<T>(workspace + i * region_bytes, slots) +
                                2 * groups) +
           group * kept_threads;
  };
  const auto partials = [&](int i) {
    return reinterpret_cast<T*>(workspace + i * region_bytes) + group * count * kept_threads;
  };

  if (copy == 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) partials(i)[reduced * kept_threads + kept] = values[i];
  }
  // The grid barrier of the group: every block's partials are visible past it.
  arrive(&counters[0], tid);
  waitForArrivals(&counters[0], count, tid);

  // This block's share of the sums, sum s = i * kept_threads + k.
  const unsigned long long sums = N * kept_threads;
  const unsigned long long share = (sums + count - 1) / count;
  const unsigned long long first = reduced * share;
  const unsigned long long end = first + share < sums ? first + share : sums;
  const unsigned lanes = threads < 32 ? static_cast<unsigned>(threads) : 32u;
  const unsigned teams = static_cast<unsigned>(threads / lanes);
  const unsigned lane = tid % lanes;
  const unsigned team = tid / lanes;
  __shared__ T team_sums[1024];
  for (unsigned long long base = first; base < end; base += lanes) {
    const unsigned long long s = base + lane;
    if (team < teams && s < end) {
      const int i = static_cast<int>(s / kept_threads);
      const unsigned long long k = s % kept_threads;
      const T* column = partials(i) + k;
      constexpr int kInFlight = 4;
      T part[kInFlight];
#pragma unroll
      for (int j = 0; j < kInFlight; ++j) part[j] = identity;
      unsigned long long b = team;
      for (; b + (kInFlight - 1) * teams < count; b += kInFlight * teams) {
#pragma unroll
        for (int j = 0; j < kInFlight; ++j)
          part[j] = op(part[j], loadCoherent(&column[(b + j * teams) * kept_threads]));
      }
      for (; b < count; b += teams) part[0] = op(part[0], loadCoherent(&column[b * kept_threads]));
      T sum = part[0];
#pragma unroll
      for (int j = 1; j < kInFlight; ++j) sum = op(sum, part[j]);
      team_sums[team * lanes + lane] = sum;
    }
    __syncthreads();
    if (team == 0 && s < end) {
      T total = identity;
      for (unsigned t = 0; t < teams; ++t) total = op(total, team_sums[t * lanes + lane]);
      finished(static_cast<int>(s / kept_threads))[s % kept_threads] = total;
    }
    __syncthreads();
  }
  arrive(&counters[1], tid);
  if (reduced != 0) return false;
  waitForArrivals(&counters[1], count, tid);
#pragma unroll
  for (int i = 0; i < N; ++i) values[i] = loadCoherent(&finished(i)[kept]);
  __syncthreads();
  // Every block has passed both counters: ready for the next launch with this workspace.
  if (tid == 0) {
    counters[0] = 0;
    counters[1] = 0;
  }
  return true;
}

}  // namespace braze
