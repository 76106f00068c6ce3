// Braze runtime header: the reduced-precision types of generated kernels. Storage only:
// kernels convert to float, compute, and convert back (round to nearest even), so no
// half-precision arithmetic is defined here.
#pragma once

namespace braze {

struct __align__(2) Half {
  unsigned short bits;

  Half() = default;
  __device__ Half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ Half(double d) { asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(d)); }
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
  __device__ BFloat16(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  __device__ BFloat16(int i) : BFloat16(static_cast<float>(i)) {}
  __device__ BFloat16(long long i) : BFloat16(static_cast<float>(i)) {}
  __device__ BFloat16(bool b) : BFloat16(b ? 1.0f : 0.0f) {}
  __device__ operator float() const { return __uint_as_float(static_cast<unsigned>(bits) << 16); }
};

}  // namespace braze
