#pragma once

// The hand-scheduled fusions every code generation test runs: the CPU tier lowers, generates
// and compiles each with NVRTC and checks the structure of the generated code; the GPU tier
// runs each and compares with the reference evaluator.
//
// Each case builds its own Fusion and schedules it with the scheduling primitives only
// (split, merge, reorder, parallelize, cache, inline, propagation), as a scheduler would. Its
// inputs describe the tensors a run binds, including non-contiguous layouts, and the sizes are
// chosen so that non-divisible splits really leave remainders.
//
//   for (const ScheduledCase& c : scheduledSuite()) {
//     std::unique_ptr<Fusion> fusion = c.build();
//     GeneratedKernel kernel = generateCuda(*fusion);
//     std::vector<EvaluatorArgument> args = makeSuiteArguments(c, /*seed=*/1);
//     ... run `kernel` on args and compare with evaluateFusion(*c.build(), args)
//   }
//
// This header is stable: cases may be added, but names and fields keep their meaning.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "support/tensor_compare.h"

namespace braze::test {

/// One input of a case, in fusion input order: the dtype and actual sizes of the tensor to
/// bind, and its layout (which the fusion's TensorSpec declares accordingly).
struct SuiteInput {
  DataType dtype = DataType::Float32;
  std::vector<int64_t> sizes;
  /// Dims from outermost to innermost in memory; empty: row-major.
  std::vector<int64_t> allocation_order = {};
  /// When >= 0: this dim advances `gap_step` times its dense stride (not contiguous).
  int64_t gap_dim = -1;
  int64_t gap_step = 1;
  /// Values are drawn uniformly from [low, high] (never all zero).
  double low = -2.0;
  double high = 2.0;
  /// A scalar input instead of a tensor: its value.
  std::optional<ScalarValue> scalar = std::nullopt;
};

/// One hand-scheduled fusion.
struct ScheduledCase {
  std::string name;         ///< unique, snake_case ("pointwise_vectorize")
  std::string description;  ///< what the schedule exercises
  /// Defines and schedules a fresh fusion; every call returns an equivalent, independent one.
  std::function<std::unique_ptr<Fusion>()> build;
  std::vector<SuiteInput> inputs;
  /// Comparison tolerance of every output; nullopt: toleranceFor(output dtype).
  std::optional<Tolerance> tolerance = std::nullopt;
  /// Text the generated CUDA must contain (a vector access, a warp shuffle, ...).
  std::vector<std::string> expected_snippets = {};
};

/// Softmax over rows of symbolic length kept in registers: one block per row, each thread
/// holding `elements_per_thread` consecutive elements of it (an unrolled loop), so a block has
/// row length / elements_per_thread threads, a size known only at launch. `bounds`, when
/// given, are stated with Fusion::setLaunchBounds.
std::unique_ptr<Fusion> persistentSoftmax(int64_t elements_per_thread,
                                          std::optional<LaunchBounds> bounds = std::nullopt);

/// Prints the case's name (for parameterized tests).
void PrintTo(const ScheduledCase& c, std::ostream* os);

/// Every case, in a fixed order.
const std::vector<ScheduledCase>& scheduledSuite();

/// The case named `name`; an unknown name fails the calling test.
const ScheduledCase& findScheduledCase(std::string_view name);

/// Arguments for one run of `c` on the host, with the layouts its inputs describe, drawn from
/// a generator seeded with `seed`.
std::vector<EvaluatorArgument> makeSuiteArguments(const ScheduledCase& c, uint64_t seed);

}  // namespace braze::test
