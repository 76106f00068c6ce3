// Braze runtime header: vector accesses. A copy of N consecutive elements as one aligned
// access (16 bytes at most): ld.global.v4.f32 for four floats.
#pragma once

namespace braze {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vector {
  T values[N];
};

template <typename T, int N>
__device__ __forceinline__ void vectorCopy(T* dst, const T* src) {
  *reinterpret_cast<Vector<T, N>*>(dst) = *reinterpret_cast<const Vector<T, N>*>(src);
}

}  // namespace braze
