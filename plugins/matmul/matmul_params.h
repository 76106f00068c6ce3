#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "matmul_export.h"

namespace braze::matmul_scheduler {

/// The decisions of the matmul heuristics: the tile of one block, the depth of its ring of
/// copies, the order blocks visit tiles in, how many blocks walk them and how many split K. Every
/// field is listed once, in forEachField, which drives encoding, decoding, printing and hashing.
struct MatmulParams {
  /// The byte format (braze/sdk/param_codec.h): "BZMM", a version byte, then every field as
  /// 8 little-endian bytes.
  static constexpr char kMagic[5] = "BZMM";
  static constexpr uint8_t kFormatVersion = 5;
  static constexpr const char* kName = "matmul";

  /// Output rows and columns of one block's tile, and the depth of one copy along K.
  int64_t tile_m = 128;
  int64_t tile_n = 256;
  int64_t tile_k = 64;
  /// Stages of the ring of operand tiles in shared memory.
  int64_t stages = 4;
  /// Tile rows a group of consecutive blocks walks down before moving to the next columns:
  /// a wave's B tiles stay in L2 for that many rows of A tiles.
  int64_t group_m = 8;
  /// Blocks launched, each walking tiles this many apart (persistent: one per SM); 0 launches
  /// one block per tile.
  int64_t ctas = 0;
  /// CTAs of a cluster that split each tile's K range (1, 2, 4 or 8) and add their partial
  /// sums in distributed shared memory: more CTAs for few tiles with a long K. Above 1, every
  /// cluster takes one tile (ctas is 0).
  int64_t split_k = 1;
  /// CTAs of a cluster that compute vertically adjacent tiles and share B's tile through
  /// multicast copies (1 or 2; 2 needs split_k 1 and tile_n 128 or 256).
  int64_t cluster_m = 1;
  /// 1: the fusion's first output (16-bit, N a multiple of 8) leaves through shared memory in
  /// bulk tensor copies that overlap the next tile; 0: every output is stored from registers.
  /// Needs split_k 1.
  int64_t tma_store = 0;
  /// Bit k set: fusion input k, read by the epilogue, has stride 1 along its innermost dim and
  /// even strides elsewhere and starts 4-byte aligned, so the epilogue loads pairs of it.
  int64_t vector_inputs = 0;
  /// Columns the epilogue stores per call: 2 (pairs; N even) or 1 (an odd N, e.g. a vocabulary
  /// projection). The heuristics follow N; 2 forced on an odd N leaves C's last column unstored
  /// rather than write past it.
  int64_t epilogue_vector = 2;

  bool operator==(const MatmulParams&) const = default;

  /// Calls `f(name, field)` for every field, in byte order.
  template <typename Params, typename F>
  static void forEachField(Params& p, F&& f) {
    f("tile_m", p.tile_m);
    f("tile_n", p.tile_n);
    f("tile_k", p.tile_k);
    f("stages", p.stages);
    f("group_m", p.group_m);
    f("ctas", p.ctas);
    f("split_k", p.split_k);
    f("cluster_m", p.cluster_m);
    f("tma_store", p.tma_store);
    f("vector_inputs", p.vector_inputs);
    f("epilogue_vector", p.epilogue_vector);
  }
};

BRAZE_MATMUL_API std::vector<uint8_t> encodeParams(const MatmulParams& params);
/// Decodes what encodeParams wrote; throws a braze::Error saying what was expected and what
/// was found.
BRAZE_MATMUL_API MatmulParams decodeParams(std::span<const uint8_t> bytes);
/// One line, "matmul{tile_m=128, tile_n=256, ...}".
BRAZE_MATMUL_API std::string toString(const MatmulParams& params);
BRAZE_MATMUL_API std::ostream& operator<<(std::ostream& os, const MatmulParams& params);

}  // namespace braze::matmul_scheduler
