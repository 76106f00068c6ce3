// computeHeuristics: the strategy table of reduction_scheduler.h turned into numbers.

#include <algorithm>
#include <cmath>

#include "braze/ir/tensor_view.h"
#include "braze/sched/vectorization.h"
#include "reduction_extents.h"
#include "reduction_layout.h"
#include "reduction_scheduler.h"

namespace braze::reduction {

namespace {

constexpr int64_t kMaxVectorBytes = 16;
// Bytes of loads each thread keeps in flight per serial step: four 16-byte vectors, enough
// for the memory system to stream without holding many registers. Measured on H200 (row sums
// of 256 MiB): 16 bytes per thread reach 75% of copy bandwidth, 32 bytes or more 95-98%.
constexpr int64_t kBytesInFlight = 64;
constexpr int64_t kMinBytesInFlight = 32;
// Scalar loads of 2-byte types need this many in flight to reach kBytesInFlight.
constexpr int64_t kMaxUnroll = 32;
// Threads per block the inner strategies aim at when rows are short: enough warps per block
// to hide latency, small enough for several blocks per SM.
constexpr int64_t kInnerBlockThreads = 256;
// Threads along a long row: 256 (eight resident blocks per SM) measured faster than 512 on
// H200 (4.11 against 3.91 TB/s for 4096 x 16384 float32), as block reductions of one block
// overlap the loads of the others; 512 when the rows are so few that 256 threads per row
// leave the SMs short of loads in flight.
constexpr int64_t kInnerThreadsX = 256;
constexpr int64_t kMaxInnerThreadsX = 512;
constexpr int64_t kMaxOuterThreadsX = 128;
constexpr int64_t kMaxOuterBlockThreads = 512;
constexpr int64_t kMaxGridY = 65535;
// One bounds check per serial step instead of one per element: measured on H200, row sums
// went from 3.5-4.1 to 4.2-4.35 TB/s (copy: 4.17) and bfloat16 column sums from 1.2 to
// 2.7-2.9 TB/s.
constexpr bool kUnswitch = true;

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t nextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int64_t product(const std::vector<std::optional<int64_t>>& extents,
                const std::vector<int64_t>& positions) {
  int64_t n = 1;
  for (const int64_t d : positions) n *= extents[d].value_or(1);
  return n;
}

bool hasWelford(const ReductionLayout& layout) {
  return std::any_of(layout.reductions.begin(), layout.reductions.end(), [](const TensorView* tv) {
    return tv->definition()->op() == OpKind::Welford;
  });
}

int64_t elementBytes(const Fusion& fusion, const std::vector<TensorView*>& vectorized) {
  int64_t bytes = 1;
  for (const TensorView* tv : vectorized) bytes = std::max(bytes, sizeInBytes(tv->dtype()));
  if (vectorized.empty()) {
    for (const Val* input : fusion.inputs()) {
      if (const auto* tv = input->dynCast<TensorView>())
        bytes = std::max(bytes, sizeInBytes(tv->dtype()));
    }
  }
  return bytes;
}

// The widest vector every vectorized input allows for these arguments.
int64_t vectorWidth(const Fusion& fusion, const std::vector<TensorView*>& vectorized,
                    const SchedulerRuntimeInfo& info, int64_t fast_extent) {
  if (vectorized.empty()) return 1;
  int64_t width = commonVectorWidth(vectorized, kMaxVectorBytes);
  const auto fits = [&](int64_t w) {
    if (fast_extent % w != 0) return false;
    for (TensorView* tv : vectorized) {
      const size_t index = fusion.inputIndex(tv);
      const auto& actual = std::get<TensorArgumentInfo>(info.arguments[index]);
      if (vectorAlignment(info, index) % (w * sizeInBytes(tv->dtype())) != 0) return false;
      for (const IterDomain* id : vectorizationLimit(tv, kMaxVectorBytes).strides_to_check) {
        if (actual.strides[logicalPosition(tv, id)] % w != 0) return false;
      }
    }
    return true;
  };
  while (width > 1 && !fits(width)) width /= 2;
  return width;
}

int64_t deviceThreads(const driver::DeviceProperties& device) {
  return int64_t{device.sm_count} * device.max_threads_per_sm;
}

// Blocks along the reduction (a grid reduction) only when the blocks along the iteration dims
// hold fewer than a quarter of the device's threads: a grid reduction costs a workspace, a
// second pass over the partials and, measured on H200, 5-15% of bandwidth when the device was
// already busy. Then enough blocks to fill one wave of resident blocks, rounded to the nearest
// count, never more than the serial steps (each block keeps at least one).
int64_t gridBlocks(int64_t blocks_x, int64_t threads_per_block, int64_t steps,
                   const driver::DeviceProperties& device) {
  if (blocks_x * threads_per_block >= deviceThreads(device) / 4 || steps <= 1) return 1;
  const int64_t resident =
      int64_t{device.sm_count} *
      std::max<int64_t>(1, device.max_threads_per_sm / std::max<int64_t>(threads_per_block, 1));
  const auto rounded = static_cast<int64_t>(
      std::llround(static_cast<double>(resident) / static_cast<double>(blocks_x)));
  return std::clamp<int64_t>(std::min(rounded, steps), 1, kMaxGridY);
}

ReductionParams innerParams(int64_t rows, int64_t row_length, int64_t vector, int64_t element_bytes,
                            const driver::DeviceProperties& device) {
  ReductionParams params;
  params.inner = true;
  params.vector_width = vector;
  const int64_t vectors = ceilDiv(row_length, vector);
  const int64_t vector_bytes = vector * element_bytes;
  const int64_t max_unroll = std::clamp<int64_t>(kBytesInFlight / vector_bytes, 1, kMaxUnroll);
  if (vectors <= device.warp_size) {
    // A short row: a few lanes, each with at least kMinBytesInFlight of it when it is that
    // long (a row of 256 bfloat16: 16 lanes of two 16-byte vectors).
    const int64_t min_unroll = std::clamp<int64_t>(kMinBytesInFlight / vector_bytes, 1, vectors);
    params.threads_x = nextPowerOfTwo(ceilDiv(vectors, min_unroll));
    params.unroll = nextPowerOfTwo(ceilDiv(vectors, params.threads_x));
  } else {
    const auto threadsAlongRow = [&](int64_t cap) {
      return std::clamp<int64_t>(nextPowerOfTwo(ceilDiv(vectors, max_unroll)), device.warp_size,
                                 cap);
    };
    params.threads_x = threadsAlongRow(kInnerThreadsX);
    if (rows * params.threads_x < deviceThreads(device) / 4)
      params.threads_x = threadsAlongRow(kMaxInnerThreadsX);
    params.unroll = std::min(max_unroll, nextPowerOfTwo(ceilDiv(vectors, params.threads_x)));
  }
  // Short rows share a block, as long as the blocks still cover the SMs.
  params.threads_y = std::max<int64_t>(1, kInnerBlockThreads / params.threads_x);
  params.threads_y = std::min(params.threads_y, nextPowerOfTwo(rows));
  while (params.threads_y > 1 && ceilDiv(rows, params.threads_y) < device.sm_count)
    params.threads_y /= 2;
  const int64_t steps = ceilDiv(vectors, params.threads_x * params.unroll);
  params.grid_blocks = gridBlocks(ceilDiv(rows, params.threads_y),
                                  params.threads_x * params.threads_y, steps, device);
  return params;
}

ReductionParams outerParams(int64_t columns, int64_t column_length, int64_t vector,
                            int64_t element_bytes, const driver::DeviceProperties& device) {
  ReductionParams params;
  params.inner = false;
  params.vector_width = vector;
  const int64_t vectors = ceilDiv(columns, vector);
  params.threads_x = std::min(nextPowerOfTwo(vectors), kMaxOuterThreadsX);
  const int64_t blocks_x = ceilDiv(vectors, params.threads_x);
  const int64_t max_unroll =
      std::clamp<int64_t>(kBytesInFlight / (vector * element_bytes), 1, kMaxUnroll);
  const int64_t device_threads = deviceThreads(device);
  if (blocks_x * params.threads_x < device_threads / 2) {
    // Too few columns to keep the device busy: spread each column's rows over TIDy.
    const int64_t wanted = nextPowerOfTwo(ceilDiv(device_threads, blocks_x * params.threads_x));
    params.threads_y = std::clamp<int64_t>(
        wanted, 1, std::max<int64_t>(1, kMaxOuterBlockThreads / params.threads_x));
    params.threads_y = std::min(params.threads_y, nextPowerOfTwo(column_length));
  }
  params.unroll = std::min(max_unroll, nextPowerOfTwo(ceilDiv(column_length, params.threads_y)));
  const int64_t steps = ceilDiv(column_length, params.threads_y * params.unroll);
  params.grid_blocks = gridBlocks(blocks_x, params.threads_x * params.threads_y, steps, device);
  return params;
}

}  // namespace

ReductionParams computeHeuristics(const Fusion& fusion, const SchedulerRuntimeInfo& info) {
  const ReductionLayout layout = reductionLayout(fusion);
  const std::vector<std::optional<int64_t>> extents = referenceExtents(fusion, layout, info);
  const int64_t iteration = product(extents, layout.iteration);
  const int64_t reduced = product(extents, layout.reduced);
  const int64_t fast_extent = layout.fast_dim >= 0 ? extents[layout.fast_dim].value_or(1) : 1;
  const std::vector<TensorView*> vectorized = vectorizableInputs(fusion, layout);
  const int64_t element_bytes = elementBytes(fusion, vectorized);
  const int64_t vector = vectorWidth(fusion, vectorized, info, fast_extent);

  if (layout.inner) {
    ReductionParams params = innerParams(iteration, reduced, vector, element_bytes, info.device);
    params.unswitch = kUnswitch;
    return params;
  }
  ReductionParams params = outerParams(iteration, reduced, vector, element_bytes, info.device);
  // Vector lanes are an iteration loop around the cross-thread reduction: each lane would
  // take a grid reduction (and a workspace pass) of its own, and this kernel writes the output
  // after that loop, where only the last block of each lane holds its result; Welford (not
  // rFactored) would merge across threads once per lane. Scalar loads keep one reduction.
  const bool lanes_break_it =
      params.grid_blocks > 1 || (hasWelford(layout) && params.threads_y > 1);
  if (vector > 1 && lanes_break_it) {
    const ReductionParams scalar = outerParams(iteration, reduced, 1, element_bytes, info.device);
    // Without vectors the rows may be few enough for one block per column group: then vectors
    // without a grid reduction load the same rows in fewer, wider accesses.
    if (scalar.grid_blocks == 1 && params.grid_blocks > 1 && !hasWelford(layout)) {
      params.grid_blocks = 1;
    } else {
      params = scalar;
    }
  }
  params.unswitch = kUnswitch;
  return params;
}

}  // namespace braze::reduction
