#include "braze/runtime/content_hash.h"

#include <cstring>
#include <type_traits>

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

ContentHasher& ContentHasher::add(const ScalarValue& value) {
  std::visit(
      [this](auto v) {
        using T = decltype(v);
        if constexpr (std::is_same_v<T, bool>) {
          add("bool").add(int64_t{v});
        } else if constexpr (std::is_same_v<T, int64_t>) {
          add("int").add(v);
        } else {
          uint64_t bits = 0;
          std::memcpy(&bits, &v, sizeof(bits));
          add("double").add(static_cast<int64_t>(bits));
        }
      },
      value);
  return *this;
}

std::string ContentHasher::hex() const {
  return sha256Hex(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()));
}

}  // namespace braze
