#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "pointwise_export.h"

namespace braze::pointwise {

/// The decisions of the pointwise heuristics: plain data the core stores, hashes and compares
/// opaquely as bytes. Every field is listed once, in forEachField, which drives encoding,
/// decoding, printing and hashing; a new field is appended there (the byte format's version
/// grows with it).
struct PointwiseParams {
  /// The byte format (braze/sdk/param_codec.h): "BZPW", a version byte, then every field as
  /// 8 little-endian bytes.
  static constexpr char kMagic[5] = "BZPW";
  static constexpr uint8_t kFormatVersion = 2;
  static constexpr const char* kName = "pointwise";

  /// Position among the fusion's outputs of the tensor whose loop all others follow.
  int64_t reference_output = 0;
  /// 0: one loop over all dims of the reference (1D). b > 0: 2D, dims [0, b) merged into rows
  /// (on BIDy, or BIDx with rows_on_x) and dims [b, rank) merged along BIDx/TIDx, so inputs
  /// broadcast along one side are read without dividing the flat index.
  int64_t break_point = 0;
  /// Elements per vector access of the cached inputs and outputs (1: no vectorization).
  int64_t vector_width = 1;
  /// Vector accesses per thread along the row, a block-width apart (ParallelType::Unroll).
  int64_t unroll = 1;
  /// Threads along the row (blockDim.x).
  int64_t threads_per_block = 128;
  /// Blocks along the vectorized loop; with grid_stride, the fixed grid that loops over it.
  int64_t blocks = 1;
  /// An outer serial loop lets a fixed grid cover more work than one launch can address.
  bool grid_stride = false;
  /// 2D: rows a block covers at once, one per threadIdx.y (rows shorter than a block).
  int64_t rows_per_block = 1;
  /// 2D: rows each thread covers one after another (ParallelType::Unroll), for rows too short
  /// to unroll along.
  int64_t row_unroll = 1;
  /// 2D: the rows on BIDx and the blocks along a row on BIDy, for more row blocks than
  /// gridDim.y allows.
  bool rows_on_x = false;

  bool operator==(const PointwiseParams&) const = default;

  /// Calls `f(name, field)` for every field, in byte order.
  template <typename Params, typename F>
  static void forEachField(Params& p, F&& f) {
    f("reference_output", p.reference_output);
    f("break_point", p.break_point);
    f("vector_width", p.vector_width);
    f("unroll", p.unroll);
    f("threads_per_block", p.threads_per_block);
    f("blocks", p.blocks);
    f("grid_stride", p.grid_stride);
    f("rows_per_block", p.rows_per_block);
    f("row_unroll", p.row_unroll);
    f("rows_on_x", p.rows_on_x);
  }
};

/// The params as bytes (PointwiseParams::kMagic, the version, then the fields).
BRAZE_POINTWISE_API std::vector<uint8_t> encodeParams(const PointwiseParams& params);

/// Decodes what encodeParams wrote; throws a braze::Error saying what was expected and what
/// was found (wrong magic, version or length).
BRAZE_POINTWISE_API PointwiseParams decodeParams(std::span<const uint8_t> bytes);

/// One line, "pointwise{reference_output=0, break_point=0, ...}".
BRAZE_POINTWISE_API std::string toString(const PointwiseParams& params);
BRAZE_POINTWISE_API std::ostream& operator<<(std::ostream& os, const PointwiseParams& params);

/// A hash of the encoded bytes (FNV-1a), stable across processes and builds.
BRAZE_POINTWISE_API uint64_t hashParams(const PointwiseParams& params);

}  // namespace braze::pointwise
