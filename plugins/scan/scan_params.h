#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "scan_export.h"

namespace braze::scan {

/// The decisions of the scan heuristics: plain data the core stores, hashes and compares
/// opaquely as bytes. Every field is listed once, in forEachField, which drives encoding,
/// decoding, printing and hashing; a new field is appended there (the byte format's version
/// grows with it).
struct ScanParams {
  /// The byte format (braze/sdk/param_codec.h): "BZSC", a version byte, then every field as
  /// 8 little-endian bytes.
  static constexpr char kMagic[5] = "BZSC";
  static constexpr uint8_t kFormatVersion = 1;
  static constexpr const char* kName = "scan";

  /// Position among the fusion's outputs of the tensor whose loop all others follow.
  int64_t reference_output = 0;
  /// The reference's dim every scan of the fusion runs along: the serial loop of each thread.
  int64_t scan_dim = 0;
  /// Threads per block over the other dims merged into one (blockDim.x).
  int64_t threads_per_block = 128;

  bool operator==(const ScanParams&) const = default;

  /// Calls `f(name, field)` for every field, in byte order.
  template <typename Params, typename F>
  static void forEachField(Params& p, F&& f) {
    f("reference_output", p.reference_output);
    f("scan_dim", p.scan_dim);
    f("threads_per_block", p.threads_per_block);
  }
};

/// The params as bytes (ScanParams::kMagic, the version, then the fields).
BRAZE_SCAN_API std::vector<uint8_t> encodeParams(const ScanParams& params);

/// Decodes what encodeParams wrote; throws a braze::Error saying what was expected and what
/// was found (wrong magic, version or length).
BRAZE_SCAN_API ScanParams decodeParams(std::span<const uint8_t> bytes);

/// One line, "scan{reference_output=0, scan_dim=1, threads_per_block=128}".
BRAZE_SCAN_API std::string toString(const ScanParams& params);
BRAZE_SCAN_API std::ostream& operator<<(std::ostream& os, const ScanParams& params);

}  // namespace braze::scan
