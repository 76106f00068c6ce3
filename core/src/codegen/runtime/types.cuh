// Braze runtime header: the reduced-precision types of generated kernels (float16, bfloat16,
// float8_e4m3fn, float8_e5m2). Storage only:
// kernels convert to float, compute, and convert back (round to nearest even), so no
// half-precision arithmetic is defined here.
#pragma once

namespace braze {

struct __align__(2) Half {
  unsigned short bits;

  Half() = default;
  __device__ Half(float f) {
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  }
  __device__ Half(double d) {
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(d));
  }
  __device__ Half(int i) : Half(static_cast<float>(i)) {}
  __device__ Half(long long i) : Half(static_cast<float>(i)) {}
  __device__ Half(bool b) : Half(b ? 1.0f : 0.0f) {}
  __device__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
  }
};

struct __align__(2) BFloat16 {
  unsigned short bits;

  BFloat16() = default;
  __device__ BFloat16(float f) {
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  }
  __device__ BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  __device__ BFloat16(int i) : BFloat16(static_cast<float>(i)) {}
  __device__ BFloat16(long long i) : BFloat16(static_cast<float>(i)) {}
  __device__ BFloat16(bool b) : BFloat16(b ? 1.0f : 0.0f) {}
  __device__ operator float() const {
    return __uint_as_float(static_cast<unsigned>(bits) << 16);
  }
};

// float8 storage, converted in software with the bit rules of PyTorch's non-saturating
// conversion (c10 Float8_e4m3fn / Float8_e5m2), which the reference evaluator also follows:
// round to nearest even from float32; e4m3fn turns anything that rounds past 448 (and infinity)
// into NaN, e5m2 into infinity. PTX's cvt to e4m3/e5m2 exists only with .satfinite (clamping
// to the largest finite), which PyTorch does not do. A double is rounded to float first.
//
// From float32 bits, for kMantissa stored mantissa bits and exponent bias kBias: magnitudes from
// kOverflowBits up are NaN (or infinity, where the format has one and the input is no NaN);
// below the smallest normal 2^(1 - kBias), adding 2^(kShift - kBias + 1) rounds to the subnormal
// quantum 2^(1 - kBias - kMantissa) in float arithmetic; normal values round by adding half a
// unit (less one, plus the kept bit's parity) below the kept bits. tests/cpp/eval/
// evaluate_float8_test.cpp checks the same formula on the host against the reference evaluator.
template <int kMantissa, int kBias, unsigned int kOverflowBits, bool kHasInfinity>
__device__ __forceinline__ unsigned char floatToFloat8(float f) {
  constexpr int kShift = 23 - kMantissa;
  unsigned int bits = __float_as_uint(f);
  const unsigned int sign = bits & 0x80000000u;
  bits ^= sign;
  unsigned int result;
  if (bits >= kOverflowBits) {
    result = (kHasInfinity && bits <= 0x7f800000u) ? (0x7fu & ~((1u << kMantissa) - 1u)) : 0x7fu;
  } else if (bits < ((127u - kBias + 1u) << 23)) {
    const unsigned int denorm = (127u - kBias + kShift + 1u) << 23;
    result = __float_as_uint(__fadd_rn(__uint_as_float(bits), __uint_as_float(denorm))) - denorm;
  } else {
    const unsigned int odd = (bits >> kShift) & 1u;
    bits += (static_cast<unsigned int>(kBias - 127) << 23) + ((1u << (kShift - 1)) - 1u) + odd;
    result = bits >> kShift;
  }
  return static_cast<unsigned char>((result & 0xffu) | (sign >> 24));
}

// 480.0f: the first magnitude that rounds past 448. 65536.0f: past 57344.
__device__ __forceinline__ unsigned char floatToFloat8E4M3fn(float f) {
  return floatToFloat8<3, 7, 1087u << 20, false>(f);
}
__device__ __forceinline__ unsigned char floatToFloat8E5M2(float f) {
  return floatToFloat8<2, 15, 143u << 23, true>(f);
}

__device__ __forceinline__ float float8E4M3fnToFloat(unsigned char b) {
  const unsigned int sign = static_cast<unsigned int>(b & 0x80) << 24;
  const unsigned int exponent = (b >> 3) & 0xf;
  const unsigned int mantissa = b & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return __uint_as_float(sign | 0x7fc00000u);
  if (exponent == 0) {
    return __uint_as_float(sign | __float_as_uint(static_cast<float>(mantissa) * 0x1p-9f));
  }
  return __uint_as_float(sign | ((exponent + 120u) << 23) | (mantissa << 20));
}

// e5m2 is the upper byte of a binary16.
__device__ __forceinline__ float float8E5M2ToFloat(unsigned char b) {
  float f;
  const unsigned short half_bits = static_cast<unsigned short>(b) << 8;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(half_bits));
  return f;
}

template <unsigned char (*kEncode)(float), float (*kDecode)(unsigned char)>
struct __align__(1) Float8 {
  unsigned char bits;

  Float8() = default;
  __device__ Float8(float f) : bits(kEncode(f)) {}
  __device__ Float8(double d) : Float8(static_cast<float>(d)) {}
  __device__ Float8(int i) : Float8(static_cast<float>(i)) {}
  __device__ Float8(long long i) : Float8(static_cast<float>(i)) {}
  __device__ Float8(bool b) : Float8(b ? 1.0f : 0.0f) {}
  __device__ operator float() const {
    return kDecode(bits);
  }
};

using Float8e4m3 = Float8<floatToFloat8E4M3fn, float8E4M3fnToFloat>;
using Float8e5m2 = Float8<floatToFloat8E5M2, float8E5M2ToFloat>;

}  // namespace braze
