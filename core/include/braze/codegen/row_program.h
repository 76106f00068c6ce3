#pragma once

// A fusion written as a row program (KernelTemplate::row_program): the arithmetic of a
// normalization, separated from its data movement. A kernel template that stages rows in shared
// memory and combines partial results across a block or a cluster calls it; code generation
// writes it from the fusion, so every softmax, layer norm or RMS norm a user writes (and any
// other chain of row reductions and pointwise ops) runs in the same template.
//
// What it covers, over rows of a reference [M, N] input (the first rank-2 input without
// broadcast dims):
//   - row inputs: rank-2 inputs indexing [M, N] in order, staged by the template in shared
//     memory, a chunk of each row per CTA;
//   - other inputs read through their strides at the element's row and column: per-column
//     parameters ([N], [1, N]: weight, bias), per-row values ([M]: a saved mean), scalars;
//   - reductions (sum, max, min) of the innermost dim, which may read the results of earlier
//     ones (softmax's max, then the sum of exponentials; layer norm's mean, then the variance);
//   - elementwise ops, casts, broadcasts, expands and sets anywhere;
//   - outputs of [M, N] (stored a vector at a time) and of [M] (row statistics);
//   - column reductions: sums (max, min) over the rows of an [M, N] value, and [N] outputs
//     computed from them alone (a weight's and a bias's gradients in a norm's backward). Each
//     thread combines its elements' operands into partials as it stores them; the template
//     combines the partials of all CTAs through a workspace and calls storeColumn.
// Welford, reshapes, permutes and slices are refused with the op named.
//
// Reductions are grouped into passes: a reduction whose operand reads no other reduction is
// in pass 0, one that reads a pass-p result in pass p + 1, so the template runs one sweep over
// its chunk and one block (cluster) combination per pass, however many reductions share it.
//
// Code generation writes, in front of the template:
//
//   struct braze_row_program {
//     <every tensor and scalar parameter, as the kernel receives them>;
//     float stat[kReductions];  // results of the current row, set by the template
//     static constexpr int kRowInputs, kReductions, kPasses, kVector;
//     __device__ long long rowCount() const;   // M
//     __device__ long long rowLength() const;  // N
//     static constexpr int rowInputBytes(int input);  // element size of row input `input`
//     static constexpr int passOf(int reduction);
//     __device__ const char* rowInputAddress(int input, long long row, long long j) const;
//     // Column inputs (weights) the template stages in shared memory (staged_columns; else 0).
//     static constexpr int kColumnInputs;
//     static constexpr int columnInputBytes(int input);
//     __device__ const char* columnInputAddress(int input, long long j) const;
//     // Values with one per row (a mean, an rstd, softmax's 1 / sum), computed once: call
//     // with level -1 when a row starts and with level p once stat[] holds pass p's results.
//     __device__ void prepareRow(int level, long long row);
//     __device__ static float identity(int reduction);
//     __device__ static float combine(int reduction, float a, float b);
//     // acc[k] of every reduction k of pass `pass` combined with its operand at elements
//     // j .. j + kVector - 1 of `row`. Row input i's vector is at element re of rows[i] (its
//     // chunk in shared memory, re = e; or the vector the thread holds in registers, re = 0);
//     // cols[i] is column input i's chunk, and `e` the position of element j in it.
//     __device__ void accumulate(int pass, long long row, long long j, const char* const* rows,
//                                int re, const char* const* cols, int e,
//                                float (&acc)[kReductions], float (&kept)[kKeptSlots]) const;
//     // With RowProgram::keep_reduction_operands: the kKept costly operands that store reads
//     // again, written by accumulate to kept[k * kVector + v] and read back by store.
//     static constexpr int kKept, kKeptSlots;  // kKeptSlots = max(1, kKept * kVector)
//     // Every [M, N] output at those elements, after the last pass; col[k * kVector + v] is
//     // combined (columnCombine) with column reduction k's operand at element j + v.
//     static constexpr int kColumnReductions, kColumnSlots;  // kColumnReductions * kVector
//     __device__ static float columnIdentity(int reduction);
//     __device__ static float columnCombine(int reduction, float a, float b);
//     __device__ void store(long long row, long long j, const char* const* rows, int re,
//                           const char* const* cols, int e, float (&col)[kColumnSlots],
//                           const float (&kept)[kKeptSlots]) const;
//     // Every [M] output of `row`, after the last pass (one thread per row).
//     __device__ void storeRow(long long row) const;
//     // Every [N] output at column j, given total[k], column reduction k over every row.
//     __device__ void storeColumn(long long j, const float* total) const;
//     char* workspace;  // KernelTemplate::RowProgram::workspace_bytes of zeroed scratch
//   };
//
// The template's entry point takes BRAZE_ROW_PARAMETERS as its only parameters (every fusion
// input and output, then scalars); it lists none of its own (KernelTemplate::parameters).
//
// Row inputs' chunks start at elements the template chooses: a multiple of kVector, with the
// row inputs' rows contiguous (stride 1 along N). Values are held in fp32 as the reference
// evaluator holds them; casts and stores round.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// What a scheduler needs to know of a fusion that can be a row program.
struct RowProgramShape {
  /// The row inputs in the order the program numbers them (the fusion's input order).
  std::vector<const TensorView*> row_inputs;
  int64_t reductions = 0;
  int64_t passes = 0;
  /// Outputs of [M, N], stored by every element's thread.
  std::vector<const TensorView*> element_outputs;
  /// Inputs indexed along the columns only ([N], [1, N]): what contiguous_columns vouches for.
  std::vector<const TensorView*> column_inputs;
  /// Reductions over the rows, and the [N] outputs computed from them.
  int64_t column_reductions = 0;
  std::vector<const TensorView*> column_outputs;
  /// Reduction operands that the outputs read again and that cost more than a few instructions
  /// (an exponential, a division): kept per element with RowProgram::keep_reduction_operands.
  int64_t kept_operands = 0;
};

/// The shape of `fusion` as a row program, or why code generation cannot write it as one (the
/// message names the op, tensor or scalar at fault). Schedulers call it from canSchedule.
std::variant<RowProgramShape, std::string> analyzeRowProgram(const Fusion& fusion);

}  // namespace braze
