// Braze runtime header: the elementwise functions beyond one CUDA math call, with the semantics
// of Braze's reference evaluator (activations, NaN-propagating maximum/minimum and the max/min
// reduction functors, Python's remainder, integer pow, lerp, shifts, signbit, gcd, nextafter),
// overloaded for every compute type. Uses float_functions.cuh (exp, erf, tanh) and limits.cuh
// (isinf).
#pragma once

namespace braze {

template <typename T>
__device__ __forceinline__ T reciprocal(T x) { return T(1) / x; }
template <typename T>
__device__ __forceinline__ T sigmoid(T x) { return T(1) / (T(1) + braze::exp(-x)); }
template <typename T>
__device__ __forceinline__ T silu(T x) { return x / (T(1) + braze::exp(-x)); }
template <typename T>
__device__ __forceinline__ T gelu(T x) { return x * T(0.5) * (T(1) + braze::erf(x * T(0.70710678118654752440))); }
template <typename T>
__device__ __forceinline__ T geluTanh(T x) {
  const T inner = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
  return T(0.5) * x * (T(1) + braze::tanh(inner));
}
// 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)) = x / (1 + 2^(-k (x + 0.044715 x^3))) with
// k = 2 sqrt(2/pi) log2(e): one exp2f (2 ulp) and a fast divide instead of tanhf, which made a
// bf16 GELU issue-bound (83% of copy bandwidth on an H200). Within 6e-7 of the exact value on
// [-12, 12]; the limits hold: 2^-inf gives x, 2^inf gives (-)0.
template <>
__device__ __forceinline__ float geluTanh(float x) {
  const float cubic = x * fmaf(0.044715f * x, x, 1.0f);  // x + 0.044715 x^3
  return __fdividef(x, 1.0f + exp2f(-2.302208198144325f * cubic));
}

__device__ __forceinline__ bool isnan(float x) { return x != x; }
__device__ __forceinline__ bool isnan(double x) { return x != x; }
template <typename T>
__device__ __forceinline__ bool isnan(T) { return false; }
__device__ __forceinline__ bool isinf(float x) {
  return x == highestValue<float>() || x == lowestValue<float>();
}
__device__ __forceinline__ bool isinf(double x) {
  return x == highestValue<double>() || x == lowestValue<double>();
}
template <typename T>
__device__ __forceinline__ bool isinf(T) { return false; }
template <typename T>
__device__ __forceinline__ bool isfinite(T x) { return !braze::isnan(x) && !braze::isinf(x); }

template <typename T>
__device__ __forceinline__ T relu(T x) { return braze::isnan(x) || x > T(0) ? x : T(0); }
template <typename T>
__device__ __forceinline__ T sign(T x) {
  if (braze::isnan(x)) return x;
  return static_cast<T>((x > T(0)) - (x < T(0)));
}

// NaN wins, as in torch.maximum / torch.minimum.
template <typename T>
__device__ __forceinline__ T maximum(T a, T b) {
  if (braze::isnan(a)) return a;
  if (braze::isnan(b)) return b;
  return a > b ? a : b;
}
template <typename T>
__device__ __forceinline__ T minimum(T a, T b) {
  if (braze::isnan(a)) return a;
  if (braze::isnan(b)) return b;
  return a < b ? a : b;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// One instruction that already propagates NaN (sm_80+), instead of two NaN tests and a
// compare per element: a max/min reduction is on every element of softmax's row.
template <>
__device__ __forceinline__ float maximum(float a, float b) {
  float result;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(result) : "f"(a), "f"(b));
  return result;
}
template <>
__device__ __forceinline__ float minimum(float a, float b) {
  float result;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(result) : "f"(a), "f"(b));
  return result;
}
#endif
template <typename T>
__device__ __forceinline__ T clamp(T x, T lo, T hi) {
  if (braze::isnan(x)) return x;
  return x < lo ? lo : (x > hi ? hi : x);
}

// Python's %: the result takes the divisor's sign.
__device__ __forceinline__ float remainder(float a, float b) {
  float r = fmodf(a, b);
  if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b;
  return r;
}
__device__ __forceinline__ double remainder(double a, double b) {
  double r = ::fmod(a, b);
  if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;
  return r;
}
template <typename T>
__device__ __forceinline__ T remainder(T a, T b) {
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
__device__ __forceinline__ float fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double fmod(double a, double b) { return ::fmod(a, b); }
template <typename T>
__device__ __forceinline__ T fmod(T a, T b) { return a % b; }

__device__ __forceinline__ float pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow(double a, double b) { return ::pow(a, b); }
template <typename T>
__device__ __forceinline__ T pow(T base, T exponent) {
  if (exponent < 0) return base == 1 ? 1 : (base == -1 ? (exponent % 2 != 0 ? -1 : 1) : 0);
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}
__device__ __forceinline__ float atan2(float a, float b) { return atan2f(a, b); }
__device__ __forceinline__ double atan2(double a, double b) { return ::atan2(a, b); }

// torch.signbit: the sign bit itself, so -0.0 and a nan with its sign bit set are negative.
__device__ __forceinline__ bool signbit(float x) { return __float_as_int(x) < 0; }
__device__ __forceinline__ bool signbit(double x) { return __double_as_longlong(x) < 0; }
template <typename T>
__device__ __forceinline__ bool signbit(T x) { return x < T(0); }

// One ulp of the operands' own type toward b (float32: nextafterf); nan gives nan.
__device__ __forceinline__ float nextafter(float a, float b) { return nextafterf(a, b); }
__device__ __forceinline__ double nextafter(double a, double b) { return ::nextafter(a, b); }

// torch.gcd on the magnitudes as unsigned integers of the operands' width: |INT_MIN| is no
// undefined behavior, and the one result that does not fit (2^31, 2^63) wraps to INT_MIN, as the
// reference evaluator does.
template <typename U>
__device__ __forceinline__ U gcdUnsigned(U x, U y) {
  while (y != 0) {
    const U r = x % y;
    x = y;
    y = r;
  }
  return x;
}
__device__ __forceinline__ int gcd(int a, int b) {
  const unsigned x = a < 0 ? 0u - static_cast<unsigned>(a) : static_cast<unsigned>(a);
  const unsigned y = b < 0 ? 0u - static_cast<unsigned>(b) : static_cast<unsigned>(b);
  return static_cast<int>(gcdUnsigned(x, y));
}
__device__ __forceinline__ long long gcd(long long a, long long b) {
  using U = unsigned long long;
  const U x = a < 0 ? 0ull - static_cast<U>(a) : static_cast<U>(a);
  const U y = b < 0 ? 0ull - static_cast<U>(b) : static_cast<U>(b);
  return static_cast<long long>(gcdUnsigned(x, y));
}

template <typename T>
__device__ __forceinline__ T lerp(T start, T end, T weight) {
  // torch.lerp: exact at weight 1.
  return weight < T(0.5) ? start + weight * (end - start) : end - (end - start) * (T(1) - weight);
}

template <typename T>
__device__ __forceinline__ T leftShift(T a, T b) {
  return (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) ? T(0) : a << b;
}
template <typename T>
__device__ __forceinline__ T rightShift(T a, T b) {
  return (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) ? (a < 0 ? T(-1) : T(0)) : a >> b;
}
// Zeros fill the vacated bits of a's two's-complement value; a count outside [0, bits) gives 0.
__device__ __forceinline__ int logicalRightShift(int a, int b) {
  return (b < 0 || b >= 32) ? 0 : static_cast<int>(static_cast<unsigned>(a) >> b);
}
__device__ __forceinline__ long long logicalRightShift(long long a, long long b) {
  return (b < 0 || b >= 64) ? 0LL
                            : static_cast<long long>(static_cast<unsigned long long>(a) >> b);
}

// The functors of max and min reductions.
struct MaxOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return braze::maximum(a, b); }
};
struct MinOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return braze::minimum(a, b); }
};

}  // namespace braze
