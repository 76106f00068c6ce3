#pragma once

// Heuristic parameters as bytes, for any plain struct that lists its fields once:
//
//   struct MyParams {
//     static constexpr char kMagic[5] = "ACPW";     // four bytes naming the format
//     static constexpr uint8_t kFormatVersion = 1;  // bump when fields change meaning
//     static constexpr const char* kName = "acme pointwise";
//     int64_t threads = 128;
//     bool unswitch = false;
//     template <typename P, typename F> static void forEachField(P& p, F&& f) {
//       f("threads", p.threads);
//       f("unswitch", p.unswitch);
//     }
//   };
//
// The format is the magic, the version byte, then every field as 8 little-endian bytes
// (integers, bools and enums as int64, floating point as its IEEE bits): fixed size, so a
// truncated or foreign buffer is recognized. Decoding checks all three and says which failed.

#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "braze/error.h"

namespace braze::sdk {

/// One field of a scheduler's encoded params, as hosts show and edit it by name: 8
/// little-endian bytes at `offset`, read as `kind` ("int64", "bool" or "float64").
/// paramFieldsOf<Params>() lists them for params encoded by encodeParams.
struct ParamField {
  std::string name;
  std::string kind;
  size_t offset = 0;
};

namespace param_codec_detail {

template <typename T>
uint64_t toBits(const T& field) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<uint64_t>(static_cast<double>(field));
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(field));
  }
}

template <typename T>
T fromBits(uint64_t bits) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::bit_cast<double>(bits));
  } else {
    return static_cast<T>(static_cast<int64_t>(bits));
  }
}

template <typename Params>
size_t encodedSize() {
  size_t fields = 0;
  Params params;
  Params::forEachField(params, [&](const char*, auto&) { ++fields; });
  return 4 + 1 + 8 * fields;
}

}  // namespace param_codec_detail

/// The bytes of `params` (see the header comment for the format).
template <typename Params>
std::vector<uint8_t> encodeParams(const Params& params) {
  std::vector<uint8_t> bytes(Params::kMagic, Params::kMagic + 4);
  bytes.push_back(Params::kFormatVersion);
  Params::forEachField(params, [&](const char*, const auto& field) {
    const uint64_t bits = param_codec_detail::toBits(field);
    for (int shift = 0; shift < 64; shift += 8)
      bytes.push_back(static_cast<uint8_t>(bits >> shift));
  });
  return bytes;
}

/// The fields of params encoded by encodeParams<Params>, for SchedulerPlugin::paramFields:
/// each field's name, kind (bool; float64 for floating point; int64 for integers and enums)
/// and byte offset.
template <typename Params>
std::vector<ParamField> paramFieldsOf() {
  std::vector<ParamField> fields;
  Params params;
  size_t offset = 5;
  Params::forEachField(params, [&](const char* name, const auto& field) {
    using T = std::decay_t<decltype(field)>;
    const char* kind = std::is_same_v<T, bool>       ? "bool"
                       : std::is_floating_point_v<T> ? "float64"
                                                     : "int64";
    fields.push_back({name, kind, offset});
    offset += 8;
  });
  return fields;
}

/// Decodes what encodeParams<Params> wrote. Throws braze::Error naming what was expected and
/// found when the magic, the version or the length differs, or a bool field is not 0 or 1.
template <typename Params>
Params decodeParams(std::span<const uint8_t> bytes) {
  const std::string magic(Params::kMagic, 4);
  BRAZE_USER_CHECK(bytes.size() >= 5 && std::equal(magic.begin(), magic.end(), bytes.begin()))
      << Params::kName << " params: expected bytes starting with \"" << magic << "\", found "
      << bytes.size() << " bytes without it; the params belong to another scheduler";
  BRAZE_USER_CHECK(bytes[4] == Params::kFormatVersion)
      << Params::kName << " params: expected format version " << int{Params::kFormatVersion}
      << ", found " << int{bytes[4]} << "; recompute the heuristics with this scheduler";
  const size_t expected = param_codec_detail::encodedSize<Params>();
  BRAZE_USER_CHECK(bytes.size() == expected)
      << Params::kName << " params: expected " << expected << " bytes for format version "
      << int{Params::kFormatVersion} << ", found " << bytes.size()
      << "; the bytes are truncated or padded";
  Params params;
  size_t offset = 5;
  Params::forEachField(params, [&](const char* name, auto& field) {
    using T = std::remove_reference_t<decltype(field)>;
    uint64_t bits = 0;
    for (int shift = 0; shift < 64; shift += 8) bits |= uint64_t{bytes[offset++]} << shift;
    // Any other value would read back as true and hide the corruption.
    if constexpr (std::is_same_v<T, bool>) {
      BRAZE_USER_CHECK(bits <= 1) << Params::kName << " params: field " << name
                                  << " must be 0 or 1, found " << static_cast<int64_t>(bits)
                                  << "; the bytes are corrupt";
    }
    field = param_codec_detail::fromBits<T>(bits);
  });
  return params;
}

/// One line: "<prefix>{threads=128, unswitch=false}". Enums print through an operator<< when
/// one is visible, else as their number.
template <typename Params>
std::string describeParams(const Params& params, const std::string& prefix) {
  std::ostringstream os;
  os << prefix << "{";
  const char* separator = "";
  Params::forEachField(params, [&](const char* name, const auto& field) {
    using T = std::decay_t<decltype(field)>;
    os << separator << name << "=";
    if constexpr (std::is_same_v<T, bool>) {
      os << (field ? "true" : "false");
    } else if constexpr (requires(std::ostream & o, const T& v) { o << v; }) {
      os << field;
    } else {
      os << static_cast<int64_t>(field);
    }
    separator = ", ";
  });
  os << "}";
  return os.str();
}

/// FNV-1a of the encoded bytes: stable across processes and builds.
template <typename Params>
uint64_t hashParams(const Params& params) {
  uint64_t hash = 14695981039346656037ull;
  for (const uint8_t byte : encodeParams(params)) {
    hash ^= byte;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace braze::sdk
