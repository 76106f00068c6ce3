#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

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
  /// 64 lowercase hex digits.
  std::string hex() const;

 private:
  std::string bytes_;
};

}  // namespace braze
