#pragma once

// The normalization cases the inner-outer scheduler's tests run: every kind of
// normalization_fusions.h in float32 and bfloat16 (some in float16) over the row lengths the
// benchmarks time, with the persistence the heuristics are expected to choose for them.

#include <cstdint>
#include <string>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "inner_outer_scheduler.h"
#include "support/normalization_fusions.h"

namespace braze::test {

struct NormalizationCase {
  Normalization kind;
  DataType dtype;
  int64_t rows;
  int64_t n;

  /// "softmax_bfloat16_4096".
  std::string name() const;
};

/// Row lengths the benchmarks time, including a non-power of two.
inline const std::vector<int64_t> kRowLengths = {256, 1000, 1024, 4096, 8192, 16384, 65536, 262144};

/// The kinds with row reductions only (no column sums).
inline constexpr Normalization kRowKinds[] = {Normalization::Softmax, Normalization::LogSoftmax,
                                              Normalization::LayerNorm, Normalization::RmsNorm,
                                              Normalization::SoftmaxBackward};

/// Row-major contiguous runtime info for `c` (16-byte aligned, H100 properties).
SchedulerRuntimeInfo runtimeInfoOf(const NormalizationCase& c);

/// The heuristics' params for `c` on `fusion` (built for `c`), after expecting both checks to
/// accept it.
inner_outer::InnerOuterParams heuristicsFor(const NormalizationCase& c, const Fusion& fusion);

/// Rows of 65536 2-byte elements in registers, as nvFuser holds them: 1024 threads, eight
/// 16-byte vectors each, two elements to a register (packed_registers).
inline void holdRowsPackedOn1024Threads(inner_outer::InnerOuterParams& params) {
  params.persistence = inner_outer::Persistence::Registers;
  params.vector_width = 8;
  params.persistent_batch = 8;
  params.threads_x = 1024;
  params.wave_unroll = 1;
  params.packed_registers = 1;
}

/// Fresh random inputs for `c` from a generator seeded with `seed` (per-row statistics such as
/// rstd drawn positive).
std::vector<EvaluatorArgument> makeNormalizationArguments(const NormalizationCase& c,
                                                          uint64_t seed);

}  // namespace braze::test
