#include "reduction_params.h"

#include <sstream>
#include <type_traits>

#include "braze/error.h"

namespace braze::reduction {

namespace {

constexpr uint8_t kMagic[4] = {'B', 'Z', 'R', 'D'};
constexpr uint8_t kFormatVersion = 2;  // 2: unswitch

int64_t numFields() {
  int64_t n = 0;
  ReductionParams p;
  ReductionParams::forEachField(p, [&](const char*, auto&) { ++n; });
  return n;
}

size_t encodedSize() {
  return sizeof(kMagic) + 1 + 8 * static_cast<size_t>(numFields());
}

}  // namespace

ReductionStrategy strategyOf(const ReductionParams& params) {
  if (params.inner) {
    if (params.grid_blocks > 1) return ReductionStrategy::InnerGrid;
    if (params.threads_x > 32) return ReductionStrategy::InnerBlock;
    if (params.threads_x > 1) return ReductionStrategy::InnerWarp;
    return ReductionStrategy::InnerThread;
  }
  if (params.grid_blocks > 1) return ReductionStrategy::OuterGrid;
  if (params.threads_y > 1) return ReductionStrategy::OuterBlock;
  return ReductionStrategy::OuterThread;
}

std::string_view toString(ReductionStrategy strategy) {
  switch (strategy) {
    case ReductionStrategy::InnerThread:
      return "inner_thread";
    case ReductionStrategy::InnerWarp:
      return "inner_warp";
    case ReductionStrategy::InnerBlock:
      return "inner_block";
    case ReductionStrategy::InnerGrid:
      return "inner_grid";
    case ReductionStrategy::OuterThread:
      return "outer_thread";
    case ReductionStrategy::OuterBlock:
      return "outer_block";
    case ReductionStrategy::OuterGrid:
      return "outer_grid";
  }
  return "unknown";
}

std::vector<uint8_t> encodeParams(const ReductionParams& params) {
  std::vector<uint8_t> bytes(std::begin(kMagic), std::end(kMagic));
  bytes.push_back(kFormatVersion);
  ReductionParams::forEachField(params, [&](const char*, const auto& field) {
    const auto value = static_cast<uint64_t>(static_cast<int64_t>(field));
    for (int shift = 0; shift < 64; shift += 8)
      bytes.push_back(static_cast<uint8_t>(value >> shift));
  });
  return bytes;
}

ReductionParams decodeParams(std::span<const uint8_t> bytes) {
  BRAZE_USER_CHECK(bytes.size() >= sizeof(kMagic) + 1 &&
                   std::equal(std::begin(kMagic), std::end(kMagic), bytes.begin()))
      << "reduction params: expected bytes starting with \"BZRD\" (written by encodeParams), "
         "found "
      << bytes.size() << " bytes without it; the params belong to another scheduler";
  BRAZE_USER_CHECK(bytes[sizeof(kMagic)] == kFormatVersion)
      << "reduction params: expected format version " << int{kFormatVersion} << ", found "
      << int{bytes[sizeof(kMagic)]} << "; recompute the heuristics with this scheduler";
  BRAZE_USER_CHECK(bytes.size() == encodedSize())
      << "reduction params: expected " << encodedSize() << " bytes for format version "
      << int{kFormatVersion} << ", found " << bytes.size() << "; the bytes are truncated or padded";
  ReductionParams params;
  size_t offset = sizeof(kMagic) + 1;
  ReductionParams::forEachField(params, [&](const char* name, auto& field) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 8) value |= uint64_t{bytes[offset++]} << shift;
    const auto signed_value = static_cast<int64_t>(value);
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
      BRAZE_USER_CHECK(signed_value == 0 || signed_value == 1)
          << "reduction params: field " << name << " must be 0 or 1, found " << signed_value
          << "; the bytes are corrupt";
      field = signed_value == 1;
    } else {
      // Every count is a factor of a split or a launch dimension: at least 1.
      BRAZE_USER_CHECK(signed_value >= 1)
          << "reduction params: field " << name << " must be at least 1, found " << signed_value
          << "; the bytes are corrupt";
      field = signed_value;
    }
  });
  return params;
}

std::string toString(const ReductionParams& params) {
  std::ostringstream os;
  os << "reduction[" << toString(strategyOf(params)) << "]{";
  const char* separator = "";
  ReductionParams::forEachField(params, [&](const char* name, const auto& field) {
    os << separator << name << "=";
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, bool>) {
      os << (field ? "true" : "false");
    } else {
      os << field;
    }
    separator = ", ";
  });
  os << "}";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const ReductionParams& params) {
  return os << toString(params);
}

uint64_t hashParams(const ReductionParams& params) {
  uint64_t hash = 14695981039346656037ull;
  for (const uint8_t byte : encodeParams(params)) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace braze::reduction
