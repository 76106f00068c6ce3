#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reduction_export.h"

namespace braze::reduction {

/// The decisions of the reduction heuristics: plain data the core stores, hashes and compares
/// opaquely as bytes. Every field is listed once, in forEachField, which drives encoding,
/// decoding, printing and hashing; a new field is appended there (the byte format's version
/// grows with it).
///
/// The fusion's dims are grouped into I (the iteration dims, merged) and R (the reduced dims,
/// merged); "inner" says R holds the innermost dim in memory (a row reduction), otherwise I
/// does (a column reduction). The loop shapes these fields produce are drawn in
/// reduction_scheduler.h.
struct ReductionParams {
  /// The byte format (braze/sdk/param_codec.h): "BZRD", a version byte, then every field as
  /// 8 little-endian bytes. Version 2 added unswitch.
  static constexpr char kMagic[5] = "BZRD";
  static constexpr uint8_t kFormatVersion = 2;
  static constexpr const char* kName = "reduction";

  /// True: the reduced dims hold the innermost dim in memory (rows are contiguous).
  bool inner = true;
  /// Elements per vector load along the innermost dim in memory (1: no vectorization).
  int64_t vector_width = 1;
  /// Vector loads per thread and serial step along R (ParallelType::Unroll), so that several
  /// loads are in flight before the first add.
  int64_t unroll = 1;
  /// TIDx: threads along R (inner) or along I (outer). 1 leaves the axis serial.
  int64_t threads_x = 1;
  /// TIDy: rows of I per block (inner) or rows of R per block (outer). For an inner reduction
  /// with threads_x == 1 these rows go on TIDx instead, one row per thread.
  int64_t threads_y = 1;
  /// BIDy: blocks sharing one reduction through a grid reduction (1: none).
  int64_t grid_blocks = 1;
  /// Each serial step checks the bounds of all its loads once (ParallelType::Unswitch) and,
  /// when they hold, runs a copy of the step without per-element predicates.
  bool unswitch = false;

  bool operator==(const ReductionParams&) const = default;

  /// Calls `f(name, field)` for every field, in byte order.
  template <typename Params, typename F>
  static void forEachField(Params& p, F&& f) {
    f("inner", p.inner);
    f("vector_width", p.vector_width);
    f("unroll", p.unroll);
    f("threads_x", p.threads_x);
    f("threads_y", p.threads_y);
    f("grid_blocks", p.grid_blocks);
    f("unswitch", p.unswitch);
  }
};

/// The kernel shape the params describe, derived from them (not stored): how many threads and
/// blocks share one reduction.
enum class ReductionStrategy {
  InnerThread,  ///< one thread per row, the row reduced serially
  InnerWarp,    ///< up to a warp per row, several rows per block
  InnerBlock,   ///< more than a warp per row: a block reduction
  InnerGrid,    ///< a row split over blocks: block then grid reduction
  OuterThread,  ///< one thread per column (or vector of columns), rows reduced serially
  OuterBlock,   ///< rows of a column spread over TIDy: a block reduction
  OuterGrid,    ///< rows of a column spread over blocks: block then grid reduction
};

BRAZE_REDUCTION_API ReductionStrategy strategyOf(const ReductionParams& params);
/// "inner_warp", "outer_grid", ...
BRAZE_REDUCTION_API std::string_view toString(ReductionStrategy strategy);

/// The params as bytes (ReductionParams::kMagic, the version, then the fields).
BRAZE_REDUCTION_API std::vector<uint8_t> encodeParams(const ReductionParams& params);

/// Decodes what encodeParams wrote; throws a braze::Error saying what was expected and what
/// was found (wrong magic, version or length, or a field out of its range).
BRAZE_REDUCTION_API ReductionParams decodeParams(std::span<const uint8_t> bytes);

/// One line, "reduction[inner_block]{inner=true, vector_width=4, ...}".
BRAZE_REDUCTION_API std::string toString(const ReductionParams& params);
BRAZE_REDUCTION_API std::ostream& operator<<(std::ostream& os, const ReductionParams& params);

/// A hash of the encoded bytes (FNV-1a), stable across processes and builds.
BRAZE_REDUCTION_API uint64_t hashParams(const ReductionParams& params);

}  // namespace braze::reduction
