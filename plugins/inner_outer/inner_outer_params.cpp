#include "inner_outer_params.h"

#include <algorithm>
#include <sstream>
#include <type_traits>

#include "braze/error.h"

namespace braze::inner_outer {

namespace {

constexpr uint8_t kMagic[4] = {'B', 'Z', 'I', 'O'};
constexpr uint8_t kFormatVersion = 1;

int64_t numFields() {
  int64_t n = 0;
  InnerOuterParams p;
  InnerOuterParams::forEachField(p, [&](const char*, auto&) { ++n; });
  return n;
}

size_t encodedSize() {
  return sizeof(kMagic) + 1 + 8 * static_cast<size_t>(numFields());
}

}  // namespace

std::string toString(Persistence persistence) {
  switch (persistence) {
    case Persistence::Registers:
      return "registers";
    case Persistence::Shared:
      return "shared";
    case Persistence::MultiWave:
      return "multi_wave";
  }
  return "unknown(" + std::to_string(static_cast<int64_t>(persistence)) + ")";
}

std::vector<uint8_t> encodeParams(const InnerOuterParams& params) {
  std::vector<uint8_t> bytes(std::begin(kMagic), std::end(kMagic));
  bytes.push_back(kFormatVersion);
  InnerOuterParams::forEachField(params, [&](const char*, const auto& field) {
    const auto value = static_cast<uint64_t>(static_cast<int64_t>(field));
    for (int shift = 0; shift < 64; shift += 8)
      bytes.push_back(static_cast<uint8_t>(value >> shift));
  });
  return bytes;
}

InnerOuterParams decodeParams(std::span<const uint8_t> bytes) {
  BRAZE_USER_CHECK(bytes.size() >= sizeof(kMagic) + 1 &&
                   std::equal(std::begin(kMagic), std::end(kMagic), bytes.begin()))
      << "inner_outer params: expected bytes starting with \"BZIO\" (written by encodeParams), "
         "found "
      << bytes.size() << " bytes without it; the params belong to another scheduler";
  BRAZE_USER_CHECK(bytes[sizeof(kMagic)] == kFormatVersion)
      << "inner_outer params: expected format version " << int{kFormatVersion} << ", found "
      << int{bytes[sizeof(kMagic)]} << "; recompute the heuristics with this scheduler";
  BRAZE_USER_CHECK(bytes.size() == encodedSize())
      << "inner_outer params: expected " << encodedSize() << " bytes for format version "
      << int{kFormatVersion} << ", found " << bytes.size() << "; the bytes are truncated or padded";
  InnerOuterParams params;
  size_t offset = sizeof(kMagic) + 1;
  InnerOuterParams::forEachField(params, [&](const char*, auto& field) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 8) value |= uint64_t{bytes[offset++]} << shift;
    field = static_cast<std::remove_reference_t<decltype(field)>>(static_cast<int64_t>(value));
  });
  const auto persistence = static_cast<int64_t>(params.persistence);
  BRAZE_USER_CHECK(persistence >= 0 && persistence <= 2)
      << "inner_outer params: persistence " << persistence
      << " is not one of 0 (registers), 1 (shared), 2 (multi_wave); the bytes are corrupt";
  return params;
}

std::string toString(const InnerOuterParams& params) {
  std::ostringstream os;
  os << "inner_outer{";
  const char* separator = "";
  InnerOuterParams::forEachField(params, [&](const char* name, const auto& field) {
    os << separator << name << "=";
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, Persistence>) {
      os << toString(field);
    } else {
      os << field;
    }
    separator = ", ";
  });
  os << "}";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const InnerOuterParams& params) {
  return os << toString(params);
}

uint64_t hashParams(const InnerOuterParams& params) {
  uint64_t hash = 14695981039346656037ull;
  for (const uint8_t byte : encodeParams(params)) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace braze::inner_outer
