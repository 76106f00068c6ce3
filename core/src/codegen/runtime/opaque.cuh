// Braze runtime header: values the C++ compiler cannot see through (Fusion::setOpaqueToCompiler).
#pragma once

namespace braze {

// `value`, passed through an empty asm statement the compiler must assume changes it: no
// instruction is emitted, but an equal expression elsewhere in the kernel is no longer equal to
// what is computed from it, so a row's values computed again after a reduction are computed
// again instead of merged with (and kept alive from) the first computation.
template <typename T>
__device__ __forceinline__ T opaque(T value) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                "opaque takes values of 1 to 8 bytes");
  if constexpr (sizeof(T) == 8) {
    unsigned long long bits = *reinterpret_cast<const unsigned long long*>(&value);
    asm volatile("" : "+l"(bits));
    return *reinterpret_cast<const T*>(&bits);
  } else if constexpr (sizeof(T) == 4) {
    unsigned bits = *reinterpret_cast<const unsigned*>(&value);
    asm volatile("" : "+r"(bits));
    return *reinterpret_cast<const T*>(&bits);
  } else {
    unsigned short bits = sizeof(T) == 2 ? *reinterpret_cast<const unsigned short*>(&value)
                                         : *reinterpret_cast<const unsigned char*>(&value);
    asm volatile("" : "+h"(bits));
    T result;
    if constexpr (sizeof(T) == 2) {
      *reinterpret_cast<unsigned short*>(&result) = bits;
    } else {
      *reinterpret_cast<unsigned char*>(&result) = static_cast<unsigned char>(bits);
    }
    return result;
  }
}

}  // namespace braze
