#pragma once

// Stream-parallel fusions the host tests run on the CPU and on the GPU, defined as a user
// writes them (ParallelType::Stream on the definition's tensors).

#include <cstdint>
#include <memory>

#include "braze/ir/fusion.h"

namespace braze::test {

/// Parallelizes `tv`'s axis `axis` as a stream axis: one index per slice, or `slices` slices.
void streamOver(TensorView* tv, int64_t axis = 0, int64_t slices = 0);

/// exp(x) * 2 + 1 over float32 [rows, cols], each tensor streamed over rows in `slices` slices;
/// with `stream_middle` false the multiply has no stream axis and splits the loop in two.
std::unique_ptr<Fusion> streamedPointwise(int64_t slices, bool stream_middle = true);
/// -segment_set(exp(x)) over float32 [rows, cols], one row per slice: two kernels in one loop
/// and the copy's input in a ring.
std::unique_ptr<Fusion> streamedTwoKernels();
/// Softmax over the rows of float32 [rows, cols], streamed in slices of `rows_per_slice` rows.
std::unique_ptr<Fusion> streamedSoftmax(int64_t rows_per_slice);
/// bfloat16 [M, K] @ [K, N] with M streamed in `slices` slices.
std::unique_ptr<Fusion> streamedMatmul(int64_t slices);
/// p - 0.1 * g over float32 [rows, cols], written into p (an optimizer-style update), streamed
/// over rows in `slices` slices.
std::unique_ptr<Fusion> streamedInPlaceUpdate(int64_t slices);
/// Row sums of `work` steps of y = sin(y) * 0.5 + y over float32 [rows, cols], every tensor
/// streamed over rows in `slices` slices: compute that `work` makes as long as a copy.
std::unique_ptr<Fusion> streamedRowSumsOfWork(int64_t slices, int64_t work);

}  // namespace braze::test
