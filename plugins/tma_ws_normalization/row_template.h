#pragma once

// The kernel of braze::tma_ws_normalization: rows of a normalization split over the CTAs of a
// cluster, each CTA's chunk of a row copied into shared memory by the copy engine and reduced
// from there, the partial results pushed to every CTA of the cluster through distributed shared
// memory. The arithmetic is the fusion's row program (braze/codegen/row_program.h), written in
// front of this template by code generation.
//
// Per CTA, warp-specialized:
//   - a producer warp (one elected thread) issues 1-d bulk copies of the CTA's chunk of each
//     row input, in `pieces` parts, each completing on its own mbarrier ("full"), into a ring
//     of `stages` row buffers; it refills a part as soon as every consumer warp has released it
//     ("empty"), so with two stages the next row streams in while this one is reduced and
//     written, and with one while it is written (CTAs whose registers go to column partials or
//     to rows held in more than 32 registers a thread have no producer warp: their first
//     consumer thread issues the copies);
//   - consumer warps sweep the chunk once per pass of the program (pass 0 starts on a part as
//     soon as it lands), combine their partials through shared memory, and one warp pushes the
//     CTA's partial into every peer's slot with a remote store and a remote mbarrier arrival;
//     every CTA then combines the cluster's partials in the same order, so all hold the same
//     statistics without a cluster-wide barrier per pass;
//   - the consumers then compute and store every output from the chunk in shared memory; or,
//     with register_rows, each consumer thread takes its vectors of the chunk into registers in
//     the first pass and releases the stage at once, so that the next row's copy overlaps every
//     later pass and the stores (costly reduction operands, softmax's exponentials, are then
//     kept in registers too, RowProgram::keep_reduction_operands, or computed again in the
//     outputs where the row takes the registers: recompute_operands);
//   - column inputs (weights, biases), the same for every row, are copied once per CTA;
//   - column reductions (a norm's weight and bias gradients): every consumer thread handles the
//     same elements of each row and keeps their partials in registers; at the end every CTA
//     writes its partials to the workspace, the grid (resident at once: launched
//     cooperatively) meets at a barrier, and each CTA adds up a share of the columns.
// A row is read from global memory once, whatever the number of passes.

#include <cstdint>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::tma_ws_normalization {

struct RowTemplateShape {
  int64_t cluster = 1;             ///< CTAs that share a row (1, 2, 4 or 8)
  int64_t consumer_threads = 256;  ///< threads that compute (the producer warp is extra)
  int64_t pieces = 4;              ///< parts of a chunk, each on its own mbarrier
  int64_t stages = 1;              ///< rows in shared memory at once (the next streams in)
  int64_t min_blocks_per_sm = 1;   ///< CTAs per SM the registers must allow (launch bounds)
  int64_t chunk = 0;               ///< elements of a row per CTA (a multiple of `unit`)
  int64_t unit = 8;  ///< elements every part starts at a multiple of (16 bytes of each input)
  /// From the row program: element bytes of each row input, reductions, passes.
  std::vector<int64_t> row_input_bytes;
  /// Element bytes of each column input staged in shared memory (none when not staged).
  std::vector<int64_t> column_input_bytes;
  int64_t reductions = 1;
  int64_t passes = 1;
  /// Reductions over the rows (column sums): their partials stay in each thread's registers
  /// (columnPartialRegisters).
  int64_t column_reductions = 0;
  int64_t vector = 1;  ///< elements per call of the row program
  /// Each consumer thread holds its vectors of the row in registers after the first pass and
  /// releases the stage at once (programs without column reductions).
  bool register_rows = false;
  /// Costly reduction operands the outputs read again (RowProgramShape::kept_operands): kept
  /// in registers with register_rows.
  int64_t kept_operands = 0;
};

/// Threads of a CTA: the consumers and, without column reductions or rows held in more than 32
/// registers a thread (or at two CTAs per SM), a producer warp (with them, the first consumer
/// thread issues the copies: a CTA of whole warp quads keeps the registers they need).
int64_t rowTemplateThreads(const RowTemplateShape& shape);
/// Registers of column partials each consumer thread holds: kVector per column reduction for
/// each vector of the chunk it handles (0 without column reductions).
int64_t columnPartialRegisters(const RowTemplateShape& shape);
/// Registers of row vectors each consumer thread holds with register_rows (else 0): 16 bytes
/// of every row input and a float per element of each kept operand, for each vector of the
/// chunk it handles.
int64_t heldRowRegisters(const RowTemplateShape& shape);
/// The workspace of a program with column reductions, as an Index scalar of `fusion`: the grid
/// barrier's counters, then every cluster's partials of every column (`clusters` and `n`
/// scalars of the fusion).
Val* columnWorkspaceBytes(Fusion& fusion, const RowTemplateShape& shape, Val* clusters, Val* n);

/// Elements of one part: the chunk split `pieces` ways, rounded up to the unit.
int64_t pieceElements(const RowTemplateShape& shape);
/// Dynamic shared memory the kernel takes (row chunks, barriers, partials).
int64_t rowTemplateSharedBytes(const RowTemplateShape& shape);
/// The template's CUDA source (its entry point BRAZE_KERNEL_NAME).
std::string rowTemplateSource(const RowTemplateShape& shape);

}  // namespace braze::tma_ws_normalization
