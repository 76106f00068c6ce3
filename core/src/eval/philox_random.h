#pragma once

// Philox-4x32-10 and the random distributions of uniform and normal, on the host: the
// reference evaluator's side of the formulas that core/src/codegen/runtime/random.cuh computes
// in kernels. The two must stay the same expression for expression (the same operations in the
// same order, fused multiply-adds where the kernel has them), which is what makes float32
// uniform bit-identical on the CPU and the GPU.

#include <array>
#include <cmath>
#include <cstdint>

namespace braze::eval_detail {

/// One Philox-4x32-10 block (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
/// SC'11): counter {index lo, index hi, offset lo, offset hi}, key {seed lo, seed hi}.
inline std::array<uint32_t, 4> philox4x32(uint64_t seed, uint64_t offset, uint64_t index) {
  constexpr uint32_t kMultiplier0 = 0xD2511F53u;
  constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u;
  constexpr uint32_t kWeyl1 = 0xBB67AE85u;
  std::array<uint32_t, 4> counter = {
      static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
      static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)};
  uint32_t key0 = static_cast<uint32_t>(seed);
  uint32_t key1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t product0 = uint64_t{kMultiplier0} * counter[0];
    const uint64_t product1 = uint64_t{kMultiplier1} * counter[2];
    counter = {
        static_cast<uint32_t>(product1 >> 32) ^ counter[1] ^ key0, static_cast<uint32_t>(product1),
        static_cast<uint32_t>(product0 >> 32) ^ counter[3] ^ key1, static_cast<uint32_t>(product0)};
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return counter;
}

/// [0, 1) with 24 random bits: exact in float32.
inline float unitFloat(uint32_t word) {
  return static_cast<float>(word >> 8) * 0x1p-24f;
}

/// [0, 1) with 53 random bits: exact in float64.
inline double unitDouble(uint32_t high, uint32_t low) {
  const uint64_t bits = ((uint64_t{high} << 32) | low) >> 11;
  return static_cast<double>(bits) * 0x1p-53;
}

/// minval + u * (maxval - minval) with one rounding; a result rounded up to maxval becomes the
/// largest value below it, so the range stays half-open.
template <typename T>
T scaleUniform(T u, T minval, T maxval) {
  const T value = std::fma(u, maxval - minval, minval);
  return (value >= maxval && minval < maxval) ? std::nextafter(maxval, minval) : value;
}

inline float uniformFloat(int64_t seed, int64_t offset, int64_t index, float minval, float maxval) {
  const auto words = philox4x32(seed, offset, index);
  return scaleUniform(unitFloat(words[0]), minval, maxval);
}

inline double uniformDouble(int64_t seed, int64_t offset, int64_t index, double minval,
                            double maxval) {
  const auto words = philox4x32(seed, offset, index);
  return scaleUniform(unitDouble(words[0], words[1]), minval, maxval);
}

inline float normalFloat(int64_t seed, int64_t offset, int64_t index, float mean, float std) {
  const auto words = philox4x32(seed, offset, index);
  const float u1 = static_cast<float>((words[0] >> 8) + 1) * 0x1p-24f;  // (0, 1]: log is finite
  const float u2 = unitFloat(words[1]);
  const float radius = std::sqrt(-2.0f * std::log(u1));
  const float z = radius * std::cos(6.28318530717958647692f * u2);
  return std::fma(z, std, mean);
}

inline double normalDouble(int64_t seed, int64_t offset, int64_t index, double mean, double std) {
  const auto words = philox4x32(seed, offset, index);
  const double u1 = 1.0 - unitDouble(words[0], words[1]);  // (0, 1]
  const double u2 = unitDouble(words[2], words[3]);
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double z = radius * std::cos(6.28318530717958647692 * u2);
  return std::fma(z, std, mean);
}

}  // namespace braze::eval_detail
