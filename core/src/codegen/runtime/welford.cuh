// Braze runtime header: Welford's running mean and variance. A partial result is (avg, m2, n):
// the mean, the sum of squared deviations from it, and the count. Partials combine with the
// parallel formula of Chan et al., so serial, block and grid steps give the same statistics.
#pragma once

namespace braze {

template <typename T>
struct WelfordTriplet {
  T avg;
  T m2;
  long long n;
};

template <typename T>
__device__ __forceinline__ void welfordUpdate(T& avg, T& m2, long long& n, T x) {
  n += 1;
  const T delta = x - avg;
  avg += delta / static_cast<T>(n);
  m2 += delta * (x - avg);
}

template <typename T>
__device__ __forceinline__ WelfordTriplet<T> welfordCombine(WelfordTriplet<T> a, WelfordTriplet<T> b) {
  const long long n = a.n + b.n;
  if (n == 0) return {T(0), T(0), 0};
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const T delta = b.avg - a.avg;
  const T nb_over_n = static_cast<T>(b.n) / static_cast<T>(n);
  return {a.avg + delta * nb_over_n, a.m2 + b.m2 + delta * delta * static_cast<T>(a.n) * nb_over_n, n};
}

template <typename T>
__device__ __forceinline__ void welfordMerge(T& avg, T& m2, long long& n, WelfordTriplet<T> other) {
  const WelfordTriplet<T> r = welfordCombine(WelfordTriplet<T>{avg, m2, n}, other);
  avg = r.avg;
  m2 = r.m2;
  n = r.n;
}

struct WelfordOp {
  template <typename T>
  __device__ __forceinline__ WelfordTriplet<T> operator()(WelfordTriplet<T> a, WelfordTriplet<T> b) const {
    return welfordCombine(a, b);
  }
};

template <typename T>
__device__ __forceinline__ WelfordTriplet<T> shuffleXor(WelfordTriplet<T> v, int offset) {
  return {__shfl_xor_sync(0xffffffffu, v.avg, offset), __shfl_xor_sync(0xffffffffu, v.m2, offset),
          __shfl_xor_sync(0xffffffffu, v.n, offset)};
}

template <typename T>
__device__ __forceinline__ WelfordTriplet<T> warpAllReduce(WelfordTriplet<T> value, WelfordOp op,
                                                           unsigned lanes = 32) {
  for (int offset = lanes / 2; offset > 0; offset /= 2) value = op(value, shuffleXor(value, offset));
  return value;
}

}  // namespace braze
