// Braze runtime header: counter-based random numbers for uniform and normal. Element k of a
// random tensor is Philox-4x32-10 of the counter {k, offset} under the key seed, turned into a
// value by the same formulas as the reference evaluator (core/src/eval/philox_random.h): keep
// the two expression for expression. Multiply-adds are explicit fmaf / fma so the compiler's
// contraction cannot change a rounding the host does not make.
#pragma once

namespace braze {

struct PhiloxWords {
  unsigned int x[4];
};

__device__ __forceinline__ PhiloxWords philox4x32(unsigned long long seed,
                                                  unsigned long long offset,
                                                  unsigned long long index) {
  unsigned int c0 = static_cast<unsigned int>(index);
  unsigned int c1 = static_cast<unsigned int>(index >> 32);
  unsigned int c2 = static_cast<unsigned int>(offset);
  unsigned int c3 = static_cast<unsigned int>(offset >> 32);
  unsigned int key0 = static_cast<unsigned int>(seed);
  unsigned int key1 = static_cast<unsigned int>(seed >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const unsigned int hi0 = __umulhi(0xD2511F53u, c0);
    const unsigned int lo0 = 0xD2511F53u * c0;
    const unsigned int hi1 = __umulhi(0xCD9E8D57u, c2);
    const unsigned int lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ key0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ key1;
    c3 = lo0;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  return PhiloxWords{{c0, c1, c2, c3}};
}

__device__ __forceinline__ float unitFloat(unsigned int word) {
  return static_cast<float>(word >> 8) * 0x1p-24f;
}

__device__ __forceinline__ double unitDouble(unsigned int high, unsigned int low) {
  const unsigned long long bits = ((static_cast<unsigned long long>(high) << 32) | low) >> 11;
  return static_cast<double>(bits) * 0x1p-53;
}

__device__ __forceinline__ float uniformFloat(long long seed, long long offset, long long index,
                                              float minval, float maxval) {
  const PhiloxWords words = philox4x32(seed, offset, index);
  const float value = fmaf(unitFloat(words.x[0]), maxval - minval, minval);
  return (value >= maxval && minval < maxval) ? nextafterf(maxval, minval) : value;
}

__device__ __forceinline__ double uniformDouble(long long seed, long long offset, long long index,
                                                double minval, double maxval) {
  const PhiloxWords words = philox4x32(seed, offset, index);
  const double value = fma(unitDouble(words.x[0], words.x[1]), maxval - minval, minval);
  return (value >= maxval && minval < maxval) ? ::nextafter(maxval, minval) : value;
}

// Box-Muller, first output. u1 is in (0, 1] so the log is finite.
__device__ __forceinline__ float normalFloat(long long seed, long long offset, long long index,
                                             float mean, float std) {
  const PhiloxWords words = philox4x32(seed, offset, index);
  const float u1 = static_cast<float>((words.x[0] >> 8) + 1u) * 0x1p-24f;
  const float u2 = unitFloat(words.x[1]);
  const float radius = sqrtf(__fmul_rn(-2.0f, logf(u1)));
  const float z = __fmul_rn(radius, cosf(__fmul_rn(6.28318530717958647692f, u2)));
  return fmaf(z, std, mean);
}

__device__ __forceinline__ double normalDouble(long long seed, long long offset, long long index,
                                               double mean, double std) {
  const PhiloxWords words = philox4x32(seed, offset, index);
  const double u1 = 1.0 - unitDouble(words.x[0], words.x[1]);
  const double u2 = unitDouble(words.x[2], words.x[3]);
  const double radius = ::sqrt(__dmul_rn(-2.0, ::log(u1)));
  const double z = __dmul_rn(radius, ::cos(__dmul_rn(6.28318530717958647692, u2)));
  return fma(z, std, mean);
}

}  // namespace braze
