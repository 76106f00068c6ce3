#include "braze/runtime/content_hash.h"

#include "braze/plugin/sha256.h"

namespace braze {

ContentHasher& ContentHasher::add(std::string_view field) {
  const uint64_t size = field.size();
  bytes_.append(reinterpret_cast<const char*>(&size), sizeof(size));
  bytes_.append(field);
  return *this;
}

ContentHasher& ContentHasher::add(std::span<const uint8_t> field) {
  return add(std::string_view(reinterpret_cast<const char*>(field.data()), field.size()));
}

std::string ContentHasher::hex() const {
  return sha256Hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()));
}

}  // namespace braze
