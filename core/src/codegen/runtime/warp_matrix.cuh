// Braze runtime header: warp-wide 8x8 matrix moves between registers and shared memory
// (stmatrix sm_90, ldmatrix sm_75). An epilogue converts wgmma accumulators to 16-bit pairs
// and stores them with stmatrix into a tile that a bulk tensor store then writes out.
#pragma once

namespace braze {

// Stores kCount (1, 2 or 4) 8x8 matrices of 16-bit elements: `fragment[i]` holds this lane's
// two elements of matrix i (row lane / 4, columns 2 (lane % 4) and +1), and lanes
// 8i .. 8i + 7 give, in `row_address`, the shared-memory addresses of the 8 rows of matrix i
// (16 bytes each, 16-byte aligned). kTranspose stores each matrix transposed.
template <int kCount, bool kTranspose = false>
__device__ __forceinline__ void storeMatrix(void* row_address, const unsigned (&fragment)[kCount]) {
  static_assert(kCount == 1 || kCount == 2 || kCount == 4, "stmatrix moves 1, 2 or 4 matrices");
  const unsigned address = sharedAddress(row_address);
  if constexpr (kCount == 1 && !kTranspose) {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n" ::"r"(address),
                 "r"(fragment[0])
                 : "memory");
  } else if constexpr (kCount == 1) {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};\n" ::"r"(address),
                 "r"(fragment[0])
                 : "memory");
  } else if constexpr (kCount == 2 && !kTranspose) {
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(address),
                 "r"(fragment[0]), "r"(fragment[1])
                 : "memory");
  } else if constexpr (kCount == 2) {
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(address),
                 "r"(fragment[0]), "r"(fragment[1])
                 : "memory");
  } else if constexpr (!kTranspose) {
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
        "r"(fragment[0]), "r"(fragment[1]), "r"(fragment[2]), "r"(fragment[3])
        : "memory");
  } else {
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address),
        "r"(fragment[0]), "r"(fragment[1]), "r"(fragment[2]), "r"(fragment[3])
        : "memory");
  }
}

// The inverse of storeMatrix: loads kCount 8x8 matrices of 16-bit elements whose row addresses
// lanes 8i .. 8i + 7 give, into this lane's `fragment`.
template <int kCount, bool kTranspose = false>
__device__ __forceinline__ void loadMatrix(unsigned (&fragment)[kCount], const void* row_address) {
  static_assert(kCount == 1 || kCount == 2 || kCount == 4, "ldmatrix moves 1, 2 or 4 matrices");
  const unsigned address = sharedAddress(row_address);
  if constexpr (kCount == 1 && !kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(fragment[0])
                 : "r"(address)
                 : "memory");
  } else if constexpr (kCount == 1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(fragment[0])
                 : "r"(address)
                 : "memory");
  } else if constexpr (kCount == 2 && !kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1])
                 : "r"(address)
                 : "memory");
  } else if constexpr (kCount == 2) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1])
                 : "r"(address)
                 : "memory");
  } else if constexpr (!kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(address)
                 : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(address)
                 : "memory");
  }
}

// Two floats as a pair of bfloat16 in one register (low half `low`), rounded to nearest: the
// packing stmatrix and mmaRs take.
__device__ __forceinline__ unsigned packBf16(float low, float high) {
  unsigned packed;
  asm("cvt.rn.bf16x2.f32 %0, %2, %1;\n" : "=r"(packed) : "f"(low), "f"(high));
  return packed;
}

// As packBf16, for float16.
__device__ __forceinline__ unsigned packF16(float low, float high) {
  unsigned packed;
  asm("cvt.rn.f16x2.f32 %0, %2, %1;\n" : "=r"(packed) : "f"(low), "f"(high));
  return packed;
}

}  // namespace braze
