// Braze runtime header: the elementwise functions that map to one CUDA math function each
// (exp, log, sqrt, tanh, erf, ...), overloaded for float and double, and their identities on
// integers (floor, ceil, round, trunc) and integer abs.
#pragma once

namespace braze {

#define BRAZE_FLOAT_FUNCTION(name, float_call, double_call)                      \
  __device__ __forceinline__ float name(float x) { return float_call(x); }       \
  __device__ __forceinline__ double name(double x) { return double_call(x); }

BRAZE_FLOAT_FUNCTION(exp, expf, ::exp)
BRAZE_FLOAT_FUNCTION(exp2, exp2f, ::exp2)
// exp(x) as 2^(x log2 e): five instructions where expf takes eight, with a relative error of at
// most about |x| 2^-24 + 2 ulp. Code generation calls it only where every output the value
// reaches is rounded to 16 bits or fewer (core/src/codegen/narrow_exp.h).
__device__ __forceinline__ float expNarrow(float x) { return exp2f(x * 1.4426950408889634f); }
BRAZE_FLOAT_FUNCTION(expm1, expm1f, ::expm1)
BRAZE_FLOAT_FUNCTION(log, logf, ::log)
BRAZE_FLOAT_FUNCTION(log2, log2f, ::log2)
BRAZE_FLOAT_FUNCTION(log1p, log1pf, ::log1p)
BRAZE_FLOAT_FUNCTION(sqrt, sqrtf, ::sqrt)
BRAZE_FLOAT_FUNCTION(rsqrt, rsqrtf, ::rsqrt)
BRAZE_FLOAT_FUNCTION(sin, sinf, ::sin)
BRAZE_FLOAT_FUNCTION(cos, cosf, ::cos)
BRAZE_FLOAT_FUNCTION(tan, tanf, ::tan)
BRAZE_FLOAT_FUNCTION(tanh, tanhf, ::tanh)
BRAZE_FLOAT_FUNCTION(erf, erff, ::erf)
BRAZE_FLOAT_FUNCTION(erfc, erfcf, ::erfc)
BRAZE_FLOAT_FUNCTION(floor, floorf, ::floor)
BRAZE_FLOAT_FUNCTION(ceil, ceilf, ::ceil)
BRAZE_FLOAT_FUNCTION(round, rintf, ::rint)  // half to even, as torch.round
BRAZE_FLOAT_FUNCTION(trunc, truncf, ::trunc)
BRAZE_FLOAT_FUNCTION(abs, fabsf, ::fabs)
#undef BRAZE_FLOAT_FUNCTION

__device__ __forceinline__ int abs(int x) { return x < 0 ? -x : x; }
__device__ __forceinline__ long long abs(long long x) { return x < 0 ? -x : x; }
template <typename T>
__device__ __forceinline__ T floor(T x) { return x; }
template <typename T>
__device__ __forceinline__ T ceil(T x) { return x; }
template <typename T>
__device__ __forceinline__ T round(T x) { return x; }
template <typename T>
__device__ __forceinline__ T trunc(T x) { return x; }

}  // namespace braze
