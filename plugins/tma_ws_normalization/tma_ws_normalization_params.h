#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "tma_ws_normalization_export.h"

namespace braze::tma_ws_normalization {

/// The decisions of the heuristics: how many CTAs share a row and how much of it each holds,
/// the consumer threads, the parts a chunk is copied in, and how many clusters walk the rows.
/// Every field is listed once, in forEachField, which drives encoding, decoding, printing and
/// hashing.
struct TmaWsNormalizationParams {
  /// The byte format (braze/sdk/param_codec.h): "BZTW", a version byte, then every field as
  /// 8 little-endian bytes.
  static constexpr char kMagic[5] = "BZTW";
  static constexpr uint8_t kFormatVersion = 3;
  static constexpr const char* kName = "tma_ws_normalization";

  /// CTAs of a cluster that split each row (1, 2, 4 or 8).
  int64_t cluster = 1;
  /// Elements of a row each CTA holds in shared memory (the row split `cluster` ways, rounded
  /// up to 16 bytes of every row input).
  int64_t chunk = 0;
  /// Threads that compute; one producer warp comes on top.
  int64_t consumer_threads = 256;
  /// Parts a chunk is copied in, each on its own barrier: the first pass starts on a part as
  /// soon as it lands, and the next row's part follows as soon as this row's is written.
  int64_t pieces = 4;
  /// Rows each CTA holds in shared memory at once: 2 lets the next row stream in while this one
  /// is reduced, but needs clusters twice as large for the same chunk; the heuristics take 1
  /// (measured faster, see planRows).
  int64_t stages = 1;
  /// CTAs per SM the plan counts on: the kernel's launch bounds cap its registers so that
  /// they are all resident (shared memory allows them by construction).
  int64_t min_blocks_per_sm = 1;
  /// Consecutive elements per call of the row program (16 bytes of the widest row input).
  int64_t vector = 4;
  /// Clusters launched, each walking rows this many apart (persistent: as many as are surely
  /// resident at once, fewer for fewer rows); 0: one cluster per row.
  int64_t clusters = 1;
  /// 1: every input indexed along the columns only (weights, biases) is contiguous and aligned
  /// to a vector of its elements, so the kernel reads it a vector at a time; 0: through its
  /// strides, an element at a time.
  int64_t contiguous_columns = 0;
  /// 1: those inputs are also copied once per CTA into shared memory (16-byte aligned, rows of
  /// whole 16-byte units), not read from L2 again for every row. Needs contiguous_columns.
  int64_t staged_columns = 0;
  /// 1: each consumer thread takes its vectors of a row into registers in the first pass and
  /// gives the stage back at once, so the next row streams in while this one is reduced and
  /// written from registers (programs without reductions over the rows).
  int64_t register_rows = 0;
  /// With register_rows: 0 keeps the costly reduction operands the outputs read again
  /// (softmax's exponentials) in registers beside the row; 1 computes them again in the outputs,
  /// which leaves those registers to the row (rows of floats at two CTAs per SM).
  int64_t recompute_operands = 0;

  bool operator==(const TmaWsNormalizationParams&) const = default;

  /// Calls `f(name, field)` for every field, in byte order.
  template <typename Params, typename F>
  static void forEachField(Params& p, F&& f) {
    f("cluster", p.cluster);
    f("chunk", p.chunk);
    f("consumer_threads", p.consumer_threads);
    f("pieces", p.pieces);
    f("stages", p.stages);
    f("min_blocks_per_sm", p.min_blocks_per_sm);
    f("vector", p.vector);
    f("clusters", p.clusters);
    f("contiguous_columns", p.contiguous_columns);
    f("staged_columns", p.staged_columns);
    f("register_rows", p.register_rows);
    f("recompute_operands", p.recompute_operands);
  }
};

BRAZE_TMA_WS_NORMALIZATION_API std::vector<uint8_t> encodeParams(
    const TmaWsNormalizationParams& params);
/// Decodes what encodeParams wrote; throws a braze::Error saying what was expected and what
/// was found.
BRAZE_TMA_WS_NORMALIZATION_API TmaWsNormalizationParams
decodeParams(std::span<const uint8_t> bytes);
BRAZE_TMA_WS_NORMALIZATION_API std::string toString(const TmaWsNormalizationParams& params);
BRAZE_TMA_WS_NORMALIZATION_API std::ostream& operator<<(std::ostream& os,
                                                        const TmaWsNormalizationParams& params);

}  // namespace braze::tma_ws_normalization
