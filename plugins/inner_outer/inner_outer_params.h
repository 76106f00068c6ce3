#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "inner_outer_export.h"

namespace braze::inner_outer {

/// Where a row lives between the reductions that read it and the ops that read it again.
enum class Persistence : int64_t {
  /// The row is split by a constant persistent batch, so every buffer is a register array of
  /// persistent_batch * vector_width elements per thread; the input is read once.
  Registers = 0,
  /// Reserved for rows kept in shared memory (not produced yet: measured slower than two
  /// kernels until the next rows' loads overlap the current row; inner_outer_scheduler.h).
  Shared = 1,
  /// The row does not fit on chip: one block per row loops over it in waves of
  /// wave_unroll * threads_x * vector_width elements; every persistent buffer is recomputed
  /// from the fusion's inputs, read again from global memory (mostly L2), in each wave loop
  /// that reads it.
  MultiWave = 2,
};

/// InnerOuterParams::read_only_loads: which inputs are read through the read-only path.
inline constexpr int64_t kPlainLoads = 0;
inline constexpr int64_t kPerColumnInputsReadOnly = 1;
inline constexpr int64_t kEveryInputReadOnly = 2;

/// The decisions of the inner-outer heuristics: plain data the core stores, hashes and compares
/// opaquely as bytes. Every field is listed once, in forEachField, which drives encoding,
/// decoding, printing and hashing; a new field is appended there (the byte format's version
/// grows with it).
struct InnerOuterParams {
  /// The byte format (braze/sdk/param_codec.h): "BZIO", a version byte, then every field as
  /// 8 little-endian bytes.
  static constexpr char kMagic[5] = "BZIO";
  static constexpr uint8_t kFormatVersion = 7;
  static constexpr const char* kName = "inner_outer";

  Persistence persistence = Persistence::Registers;
  /// Position among the fusion's outputs of the full-size tensor whose loop all others follow.
  int64_t reference_output = 0;
  /// Elements per vector access of the cached row inputs and outputs (1: no vectorization).
  int64_t vector_width = 1;
  /// Registers: vectors of a row each thread keeps (the constant outer split of the row).
  int64_t persistent_batch = 1;
  /// Threads along a row: the launch's blockDim.x. Registers: ceil(row / (vector_width *
  /// persistent_batch)) for the row length the heuristics saw; multi-wave: the constant split.
  int64_t threads_x = 128;
  /// Rows a block works on at once, one per threadIdx.y.
  int64_t rows_per_block = 1;
  /// Fusions that also sum over the rows (normalization backward): the blocks G sharing the
  /// rows, each looping over its share one row at a time; 0 otherwise.
  int64_t row_blocks = 0;
  /// The row length the heuristics saw (a persistent schedule is only valid for it).
  int64_t row_length = 0;
  /// Multi-wave: vectors each thread loads per iteration of a wave loop (the unrolled split of
  /// a wave, all loads issued before their first use); 1 in the other shapes.
  int64_t wave_unroll = 1;
  /// Blocks of threads_x * rows_per_block threads that should be resident on one SM at once:
  /// the kernel's launch bounds (Fusion::setLaunchBounds) ask ptxas to fit that many in the
  /// register file (65536 / (threads * blocks) registers per thread). 0: no launch bounds,
  /// except the block size for blocks of more than 512 threads.
  int64_t min_blocks_per_sm = 0;
  /// Inner-outer: rows each thread works on in one iteration of the row loop (an unrolled split
  /// of the rows, outside threadIdx.y). Their loads are all issued before the first row's
  /// reductions, and the column partials and weights, which do not depend on the row, are
  /// shared by them; 1 in the other shapes.
  int64_t rows_per_thread = 1;
  /// Inner-outer: 1 when each thread's column partials live in shared memory (its own slots:
  /// no barrier between rows) rather than registers, which leaves the registers to the rows.
  /// Rows too long for both in registers (backward rows of 16384) take it; 0 otherwise.
  int64_t shared_column_partials = 0;
  /// Inputs read through the read-only data path (Fusion::setReadOnlyLoads), whose loads may
  /// then move ahead of the kernel's stores: kPlainLoads, kPerColumnInputsReadOnly (weights and
  /// biases, read beside the outputs' stores) or kEveryInputReadOnly.
  int64_t read_only_loads = kPlainLoads;
  /// 1: register arrays of 2-byte elements held two to a 32-bit register
  /// (Fusion::setPackedHalfRegisters); 0: as the compiler splits them, one per register.
  int64_t packed_registers = 0;
  /// 1: the kernel is compiled for row_length (Fusion::assumeExtent), so its block, which follows
  /// the row length, is a constant and its block reductions unroll for it; 0: the block is
  /// read at run time. Multi-wave blocks are constants either way. The heuristics take it for
  /// kernels with column sums (row_blocks > 0) where it measured faster.
  int64_t fixed_row_length = 0;

  bool operator==(const InnerOuterParams&) const = default;

  /// Calls `f(name, field)` for every field, in byte order.
  template <typename Params, typename F>
  static void forEachField(Params& p, F&& f) {
    f("persistence", p.persistence);
    f("reference_output", p.reference_output);
    f("vector_width", p.vector_width);
    f("persistent_batch", p.persistent_batch);
    f("threads_x", p.threads_x);
    f("rows_per_block", p.rows_per_block);
    f("row_blocks", p.row_blocks);
    f("row_length", p.row_length);
    f("wave_unroll", p.wave_unroll);
    f("min_blocks_per_sm", p.min_blocks_per_sm);
    f("rows_per_thread", p.rows_per_thread);
    f("shared_column_partials", p.shared_column_partials);
    f("read_only_loads", p.read_only_loads);
    f("packed_registers", p.packed_registers);
    f("fixed_row_length", p.fixed_row_length);
  }
};

/// "registers", "shared" or "multi_wave".
BRAZE_INNER_OUTER_API std::string toString(Persistence persistence);
BRAZE_INNER_OUTER_API std::ostream& operator<<(std::ostream& os, Persistence persistence);

/// The params as bytes (InnerOuterParams::kMagic, the version, then the fields).
BRAZE_INNER_OUTER_API std::vector<uint8_t> encodeParams(const InnerOuterParams& params);

/// Decodes what encodeParams wrote; throws a braze::Error saying what was expected and what
/// was found (wrong magic, version, length or persistence value).
BRAZE_INNER_OUTER_API InnerOuterParams decodeParams(std::span<const uint8_t> bytes);

/// One line, "inner_outer{persistence=registers, reference_output=0, ...}".
BRAZE_INNER_OUTER_API std::string toString(const InnerOuterParams& params);
BRAZE_INNER_OUTER_API std::ostream& operator<<(std::ostream& os, const InnerOuterParams& params);

/// A hash of the encoded bytes (FNV-1a), stable across processes and builds.
BRAZE_INNER_OUTER_API uint64_t hashParams(const InnerOuterParams& params);

}  // namespace braze::inner_outer
