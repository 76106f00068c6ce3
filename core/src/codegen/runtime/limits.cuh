// Braze runtime header: the lowest and highest value of each compute type (the identities of
// max/min reductions; isinf compares with them).
#pragma once

namespace braze {

template <typename T>
__device__ __forceinline__ T lowestValue();
template <typename T>
__device__ __forceinline__ T highestValue();
template <>
__device__ __forceinline__ float lowestValue<float>() { return __int_as_float(0xff800000); }
template <>
__device__ __forceinline__ float highestValue<float>() { return __int_as_float(0x7f800000); }
template <>
__device__ __forceinline__ double lowestValue<double>() { return __longlong_as_double(0xfff0000000000000ULL); }
template <>
__device__ __forceinline__ double highestValue<double>() { return __longlong_as_double(0x7ff0000000000000ULL); }
template <>
__device__ __forceinline__ int lowestValue<int>() { return -2147483647 - 1; }
template <>
__device__ __forceinline__ int highestValue<int>() { return 2147483647; }
template <>
__device__ __forceinline__ long long lowestValue<long long>() { return -9223372036854775807LL - 1; }
template <>
__device__ __forceinline__ long long highestValue<long long>() { return 9223372036854775807LL; }
template <>
__device__ __forceinline__ bool lowestValue<bool>() { return false; }
template <>
__device__ __forceinline__ bool highestValue<bool>() { return true; }

}  // namespace braze
