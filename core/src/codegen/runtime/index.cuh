// Braze runtime header: index arithmetic of generated kernels (extents, tiles, predicates):
// integer ceil division, min and max of index expressions.
#pragma once

namespace braze {

template <typename A, typename B>
__device__ __forceinline__ auto ceilDiv(A a, B b) -> decltype(a / b) {
  return (a + b - 1) / b;
}
template <typename A, typename B>
__device__ __forceinline__ auto min(A a, B b) -> decltype(a + b) {
  return a < b ? a : b;
}
template <typename A, typename B>
__device__ __forceinline__ auto max(A a, B b) -> decltype(a + b) {
  return a > b ? a : b;
}

}  // namespace braze
