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

// A load of memory no thread of the kernel writes (an input it only reads), as ld.global.nc in
// an asm statement that is neither volatile nor clobbers memory: the compiler may then move it
// across the kernel's stores, so an epilogue that reads an input and stores an output per
// element issues its loads together instead of waiting for each one in turn.
template <typename T>
__device__ __forceinline__ T loadReadOnly(const T* address) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                "loadReadOnly moves 1, 2, 4 or 8 bytes");
  union {
    T value;
    unsigned char bytes[sizeof(T)];
    unsigned short half;
    unsigned word;
    unsigned long long pair;
  } loaded;
  if constexpr (sizeof(T) == 1) {
    unsigned short bits;
    asm("ld.global.nc.u8 %0, [%1];" : "=h"(bits) : "l"(address));
    loaded.bytes[0] = static_cast<unsigned char>(bits);
  } else if constexpr (sizeof(T) == 2) {
    asm("ld.global.nc.b16 %0, [%1];" : "=h"(loaded.half) : "l"(address));
  } else if constexpr (sizeof(T) == 4) {
    asm("ld.global.nc.b32 %0, [%1];" : "=r"(loaded.word) : "l"(address));
  } else {
    asm("ld.global.nc.b64 %0, [%1];" : "=l"(loaded.pair) : "l"(address));
  }
  return loaded.value;
}

// vectorCopy from global memory no thread of the kernel writes, through the read-only path
// (ld.global.nc, an asm statement that is neither volatile nor clobbers memory): the compiler
// may move it across the kernel's stores (see loadReadOnly).
template <typename T, int N>
__device__ __forceinline__ void vectorLoadReadOnly(T* dst, const T* src) {
  constexpr int kBytes = sizeof(T) * N;
  static_assert(kBytes == 1 || kBytes == 2 || kBytes == 4 || kBytes == 8 || kBytes == 16,
                "vectorLoadReadOnly moves 1, 2, 4, 8 or 16 bytes");
  if constexpr (kBytes == 16) {
    Vector<unsigned, 4> v;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.values[0]), "=r"(v.values[1]), "=r"(v.values[2]), "=r"(v.values[3])
        : "l"(src));
    *reinterpret_cast<Vector<unsigned, 4>*>(dst) = v;
  } else {
    // 1 to 8 bytes: one scalar load of that size.
    using Whole = Vector<T, N>;
    *reinterpret_cast<Whole*>(dst) = loadReadOnly(reinterpret_cast<const Whole*>(src));
  }
}

// Element k of a register array of 2-byte values (Half, BFloat16, whose one member is `bits`)
// read out of the 32-bit word that holds it: the compiler then keeps the array two elements to
// a register, where reading elements on their own made it split each loaded word in two
// (Fusion::setPackedHalfRegisters).
template <typename T, int N>
__device__ __forceinline__ T packedElement(const T (&array)[N], int k) {
  static_assert(sizeof(T) == 2 && N % 2 == 0, "packedElement reads even arrays of 2-byte values");
  const unsigned word = reinterpret_cast<const unsigned*>(array)[k >> 1];
  T value;
  value.bits = static_cast<unsigned short>((k & 1) ? word >> 16 : word);
  return value;
}

}  // namespace braze
