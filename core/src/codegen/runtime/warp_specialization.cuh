// Braze runtime header: warp specialization, sm_90a. A warp-specialized kernel splits its block
// into warp groups (4 consecutive warps, 128 threads) with different roles, e.g. one producer
// issuing bulk copies and one or two consumers running wgmma, and moves registers from the
// roles that need few to the ones that need many.
#pragma once

namespace braze {
namespace warpgroup {

// This thread's warp group in a 1-D block, the same in every lane: read through a shuffle from
// lane 0, which the compiler knows to be warp-uniform, so it branches on it without divergence
// handling (role branches must be uniform for setmaxnreg and wgmma).
__device__ __forceinline__ int index() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
}

// This thread's rank within its warp group, 0 to 127.
__device__ __forceinline__ int threadRank() {
  return static_cast<int>(threadIdx.x) % 128;
}

// This thread's warp within its warp group, 0 to 3, warp-uniform.
__device__ __forceinline__ int warpRank() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32 % 4, 0);
}

// Raises this warp group's register budget to kRegisters per thread (a multiple of 8, 24 to
// 256), waiting until other warp groups have released enough. Takes effect only when the
// kernel has a register cap at entry (__launch_bounds__(threads, 1) or maxrregcount) and every
// warp of the group executes it; ptxas warns (C7508) and ignores it otherwise.
template <int kRegisters>
__device__ __forceinline__ void increaseRegisters() {
  static_assert(kRegisters % 8 == 0 && kRegisters >= 24 && kRegisters <= 256,
                "setmaxnreg takes a multiple of 8 from 24 to 256");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// Lowers this warp group's register budget to kRegisters per thread, releasing the rest to the
// warp groups that raise theirs (the producer of a warp-specialized kernel needs few).
template <int kRegisters>
__device__ __forceinline__ void decreaseRegisters() {
  static_assert(kRegisters % 8 == 0 && kRegisters >= 24 && kRegisters <= 256,
                "setmaxnreg takes a multiple of 8 from 24 to 256");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

}  // namespace warpgroup

// An elected lane: true in exactly one lane of the warp (elect.sync), without the compare
// chain of `lane == 0`. For the one thread that issues a copy or initializes a barrier.
__device__ __forceinline__ bool electOne() {
  unsigned elected;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  elect.sync _|p, 0xffffffff;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(elected));
  return elected != 0;
}

}  // namespace braze
