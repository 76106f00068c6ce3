#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "braze/ir/scalar_value.h"

namespace braze {

/// SHA-256 over a sequence of fields, each length-prefixed, so that moving a boundary between
/// two fields changes the hash: the content addresses and integrity hashes of the persistent
/// caches.
class ContentHasher {
 public:
  explicit ContentHasher(std::string_view domain) { add(domain); }
  ContentHasher& add(std::string_view field);
  ContentHasher& add(std::span<const uint8_t> field);
  ContentHasher& add(int64_t value) { return add(std::to_string(value)); }
  /// A scalar with its category; doubles bitwise, so -0.0 and every nan payload differ.
  ContentHasher& add(const ScalarValue& value);
  /// 64 lowercase hex digits.
  std::string hex() const;

 private:
  std::string bytes_;
};

}  // namespace braze
