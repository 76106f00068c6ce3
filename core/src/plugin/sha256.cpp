// A plain SHA-256, so that checking a plugin's manifest needs no crypto library.

#include "braze/plugin/sha256.h"

#include <array>
#include <cstring>
#include <fstream>
#include <vector>

#include "braze/error.h"

namespace braze {
namespace {

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotateRight(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

/// Incremental hashing, so that large plugin libraries are read in chunks.
class Sha256 {
 public:
  void update(std::span<const uint8_t> bytes) {
    for (uint8_t byte : bytes) {
      block_[block_size_++] = byte;
      if (block_size_ == 64) {
        compress();
        block_size_ = 0;
      }
    }
    length_bits_ += static_cast<uint64_t>(bytes.size()) * 8;
  }

  std::string hex() {
    uint64_t length_bits = length_bits_;
    const uint8_t one = 0x80;
    update(std::span<const uint8_t>(&one, 1));
    const uint8_t zero = 0;
    while (block_size_ != 56) update(std::span<const uint8_t>(&zero, 1));
    std::array<uint8_t, 8> length{};
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(length_bits >> (56 - 8 * i));
    update(length);
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (uint32_t word : state_) {
      for (int shift = 28; shift >= 0; shift -= 4) out += kDigits[(word >> shift) & 0xf];
    }
    return out;
  }

 private:
  void compress() {
    std::array<uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i) {
      w[i] = (uint32_t{block_[4 * i]} << 24) | (uint32_t{block_[4 * i + 1]} << 16) |
             (uint32_t{block_[4 * i + 2]} << 8) | uint32_t{block_[4 * i + 3]};
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotateRight(w[i - 15], 7) ^ rotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotateRight(w[i - 2], 17) ^ rotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::array<uint32_t, 8> v = state_;
    for (int i = 0; i < 64; ++i) {
      uint32_t s1 = rotateRight(v[4], 6) ^ rotateRight(v[4], 11) ^ rotateRight(v[4], 25);
      uint32_t choose = (v[4] & v[5]) ^ (~v[4] & v[6]);
      uint32_t t1 = v[7] + s1 + choose + kRoundConstants[i] + w[i];
      uint32_t s0 = rotateRight(v[0], 2) ^ rotateRight(v[0], 13) ^ rotateRight(v[0], 22);
      uint32_t majority = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      uint32_t t2 = s0 + majority;
      v = {t1 + t2, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
    }
    for (int i = 0; i < 8; ++i) state_[i] += v[i];
  }

  std::array<uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint8_t, 64> block_{};
  size_t block_size_ = 0;
  uint64_t length_bits_ = 0;
};

}  // namespace

std::string sha256Hex(std::span<const uint8_t> bytes) {
  Sha256 hash;
  hash.update(bytes);
  return hash.hex();
}

std::string sha256OfFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  BRAZE_USER_CHECK(in.good()) << "sha256: cannot open '" << path.string()
                              << "' for reading; check that it exists and is readable.";
  Sha256 hash;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    auto count = static_cast<size_t>(in.gcount());
    hash.update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(chunk.data()), count));
  }
  return hash.hex();
}

}  // namespace braze
