// Braze runtime header: warp-group matrix multiply-accumulate (wgmma), sm_90a. Four
// consecutive warps (a warp group, starting at a warp index divisible by 4) multiply a 64xK16
// tile of A by a K16xN tile of B into 64xN fp32 accumulators held in their registers, N a
// multiple of 8 up to 256. B is read from shared memory through a matrix descriptor; A from
// shared memory too (mmaSs) or from registers (mmaRs).
#pragma once

namespace braze {
namespace wgmma {

// Shared-memory layouts a descriptor can name; the tile must be laid out by the same pattern
// (a tensor map with the matching CU_TENSOR_MAP_SWIZZLE_* writes it so). The values are the
// descriptor's 2-bit field.
enum class Swizzle : unsigned { None = 0, B128 = 1, B64 = 2, B32 = 3 };

// The 64-bit descriptor of a tile in shared memory. `leading_bytes`: distance between the
// 8x(16 bytes) core matrices adjacent along K for K-major tiles (ignored for swizzled K-major
// tiles: the swizzle atom fixes it); `stride_bytes`: distance between core matrices adjacent
// along M or N (1024 for a 128-byte swizzle: 8 rows of 128 bytes). A swizzled tile starts on a
// boundary of its pattern's repeat (1024 bytes for 128B) so the base-offset field stays 0.
__device__ __forceinline__ unsigned long long descriptor(const void* tile, unsigned leading_bytes,
                                                         unsigned stride_bytes, Swizzle swizzle) {
  const unsigned long long address = sharedAddress(tile);
  return ((address & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>((leading_bytes >> 4) & 0x3FFF) << 16) |
         (static_cast<unsigned long long>((stride_bytes >> 4) & 0x3FFF) << 32) |
         (static_cast<unsigned long long>(swizzle) << 62);
}

// `desc` moved by `bytes` (a multiple of 16) in shared memory: how a K loop steps through a
// swizzled tile (32 bytes per k16 step of 16-bit elements; the hardware applies the swizzle
// to the moved address).
__device__ __forceinline__ unsigned long long advance(unsigned long long desc, unsigned bytes) {
  return desc + (bytes >> 4);
}

// Orders this warp group's earlier register and shared-memory writes before the wgmma
// instructions that follow (required before the first wgmma that reads accumulators or A
// registers written by ordinary instructions).
__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// Closes the group of wgmma instructions issued since the last commit.
__device__ __forceinline__ void commitGroup() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `kPending` committed groups are in flight; their accumulators and
// shared-memory operands are then free.
template <int kPending>
__device__ __forceinline__ void waitGroup() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Tells the compiler each accumulator may change here, so it neither reads one early nor
// moves a use across the wait that makes it valid. Put it after waitGroup and before fence.
template <int kCount>
__device__ __forceinline__ void fenceAccumulators(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Element types of A and B.
struct Bf16 {};
struct F16 {};

// Two fp32 values rounded to nearest even into one register of the operand type, x0 in the low
// half (the lower address): how a kernel converts fp32 data into operand tiles.
__device__ __forceinline__ unsigned pack(Bf16, float x0, float x1) {
  unsigned packed;
  asm("cvt.rn.bf16x2.f32 %0, %2, %1;" : "=r"(packed) : "f"(x0), "f"(x1));
  return packed;
}
__device__ __forceinline__ unsigned pack(F16, float x0, float x1) {
  unsigned packed;
  asm("cvt.rn.f16x2.f32 %0, %2, %1;" : "=r"(packed) : "f"(x0), "f"(x1));
  return packed;
}

// The accumulator layout of one m64nN instruction, for thread t of the warp group (warp
// w = t / 32, lane l): d[4j + q] holds row 16w + l/4 + 8(q/2), column 8j + 2(l%4) + q%2.

// The instruction text is built from string tables, one entry per N/8: an asm statement
// needs its operand list spelled out, and N up to 256 means up to 128 accumulator operands.
// ACC_m: the accumulator operands of N = 8m. OUT_m: their constraints.
// clang-format off
#define BRAZE_WGMMA_ACC_1 "%0, %1, %2, %3"
#define BRAZE_WGMMA_ACC_2 BRAZE_WGMMA_ACC_1 ", " "%4, %5, %6, %7"
#define BRAZE_WGMMA_ACC_3 BRAZE_WGMMA_ACC_2 ", " "%8, %9, %10, %11"
#define BRAZE_WGMMA_ACC_4 BRAZE_WGMMA_ACC_3 ", " "%12, %13, %14, %15"
#define BRAZE_WGMMA_ACC_5 BRAZE_WGMMA_ACC_4 ", " "%16, %17, %18, %19"
#define BRAZE_WGMMA_ACC_6 BRAZE_WGMMA_ACC_5 ", " "%20, %21, %22, %23"
#define BRAZE_WGMMA_ACC_7 BRAZE_WGMMA_ACC_6 ", " "%24, %25, %26, %27"
#define BRAZE_WGMMA_ACC_8 BRAZE_WGMMA_ACC_7 ", " "%28, %29, %30, %31"
#define BRAZE_WGMMA_ACC_9 BRAZE_WGMMA_ACC_8 ", " "%32, %33, %34, %35"
#define BRAZE_WGMMA_ACC_10 BRAZE_WGMMA_ACC_9 ", " "%36, %37, %38, %39"
#define BRAZE_WGMMA_ACC_11 BRAZE_WGMMA_ACC_10 ", " "%40, %41, %42, %43"
#define BRAZE_WGMMA_ACC_12 BRAZE_WGMMA_ACC_11 ", " "%44, %45, %46, %47"
#define BRAZE_WGMMA_ACC_13 BRAZE_WGMMA_ACC_12 ", " "%48, %49, %50, %51"
#define BRAZE_WGMMA_ACC_14 BRAZE_WGMMA_ACC_13 ", " "%52, %53, %54, %55"
#define BRAZE_WGMMA_ACC_15 BRAZE_WGMMA_ACC_14 ", " "%56, %57, %58, %59"
#define BRAZE_WGMMA_ACC_16 BRAZE_WGMMA_ACC_15 ", " "%60, %61, %62, %63"
#define BRAZE_WGMMA_ACC_17 BRAZE_WGMMA_ACC_16 ", " "%64, %65, %66, %67"
#define BRAZE_WGMMA_ACC_18 BRAZE_WGMMA_ACC_17 ", " "%68, %69, %70, %71"
#define BRAZE_WGMMA_ACC_19 BRAZE_WGMMA_ACC_18 ", " "%72, %73, %74, %75"
#define BRAZE_WGMMA_ACC_20 BRAZE_WGMMA_ACC_19 ", " "%76, %77, %78, %79"
#define BRAZE_WGMMA_ACC_21 BRAZE_WGMMA_ACC_20 ", " "%80, %81, %82, %83"
#define BRAZE_WGMMA_ACC_22 BRAZE_WGMMA_ACC_21 ", " "%84, %85, %86, %87"
#define BRAZE_WGMMA_ACC_23 BRAZE_WGMMA_ACC_22 ", " "%88, %89, %90, %91"
#define BRAZE_WGMMA_ACC_24 BRAZE_WGMMA_ACC_23 ", " "%92, %93, %94, %95"
#define BRAZE_WGMMA_ACC_25 BRAZE_WGMMA_ACC_24 ", " "%96, %97, %98, %99"
#define BRAZE_WGMMA_ACC_26 BRAZE_WGMMA_ACC_25 ", " "%100, %101, %102, %103"
#define BRAZE_WGMMA_ACC_27 BRAZE_WGMMA_ACC_26 ", " "%104, %105, %106, %107"
#define BRAZE_WGMMA_ACC_28 BRAZE_WGMMA_ACC_27 ", " "%108, %109, %110, %111"
#define BRAZE_WGMMA_ACC_29 BRAZE_WGMMA_ACC_28 ", " "%112, %113, %114, %115"
#define BRAZE_WGMMA_ACC_30 BRAZE_WGMMA_ACC_29 ", " "%116, %117, %118, %119"
#define BRAZE_WGMMA_ACC_31 BRAZE_WGMMA_ACC_30 ", " "%120, %121, %122, %123"
#define BRAZE_WGMMA_ACC_32 BRAZE_WGMMA_ACC_31 ", " "%124, %125, %126, %127"

#define BRAZE_WGMMA_OUT_1(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define BRAZE_WGMMA_OUT_2(d) BRAZE_WGMMA_OUT_1(d), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define BRAZE_WGMMA_OUT_3(d) BRAZE_WGMMA_OUT_2(d), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define BRAZE_WGMMA_OUT_4(d) BRAZE_WGMMA_OUT_3(d), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define BRAZE_WGMMA_OUT_5(d) BRAZE_WGMMA_OUT_4(d), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
#define BRAZE_WGMMA_OUT_6(d) BRAZE_WGMMA_OUT_5(d), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define BRAZE_WGMMA_OUT_7(d) BRAZE_WGMMA_OUT_6(d), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define BRAZE_WGMMA_OUT_8(d) BRAZE_WGMMA_OUT_7(d), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define BRAZE_WGMMA_OUT_9(d) BRAZE_WGMMA_OUT_8(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define BRAZE_WGMMA_OUT_10(d) BRAZE_WGMMA_OUT_9(d), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define BRAZE_WGMMA_OUT_11(d) BRAZE_WGMMA_OUT_10(d), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define BRAZE_WGMMA_OUT_12(d) BRAZE_WGMMA_OUT_11(d), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define BRAZE_WGMMA_OUT_13(d) BRAZE_WGMMA_OUT_12(d), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
#define BRAZE_WGMMA_OUT_14(d) BRAZE_WGMMA_OUT_13(d), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define BRAZE_WGMMA_OUT_15(d) BRAZE_WGMMA_OUT_14(d), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
#define BRAZE_WGMMA_OUT_16(d) BRAZE_WGMMA_OUT_15(d), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define BRAZE_WGMMA_OUT_17(d) BRAZE_WGMMA_OUT_16(d), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
#define BRAZE_WGMMA_OUT_18(d) BRAZE_WGMMA_OUT_17(d), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define BRAZE_WGMMA_OUT_19(d) BRAZE_WGMMA_OUT_18(d), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define BRAZE_WGMMA_OUT_20(d) BRAZE_WGMMA_OUT_19(d), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define BRAZE_WGMMA_OUT_21(d) BRAZE_WGMMA_OUT_20(d), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
#define BRAZE_WGMMA_OUT_22(d) BRAZE_WGMMA_OUT_21(d), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define BRAZE_WGMMA_OUT_23(d) BRAZE_WGMMA_OUT_22(d), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
#define BRAZE_WGMMA_OUT_24(d) BRAZE_WGMMA_OUT_23(d), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define BRAZE_WGMMA_OUT_25(d) BRAZE_WGMMA_OUT_24(d), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
#define BRAZE_WGMMA_OUT_26(d) BRAZE_WGMMA_OUT_25(d), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define BRAZE_WGMMA_OUT_27(d) BRAZE_WGMMA_OUT_26(d), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
#define BRAZE_WGMMA_OUT_28(d) BRAZE_WGMMA_OUT_27(d), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define BRAZE_WGMMA_OUT_29(d) BRAZE_WGMMA_OUT_28(d), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
#define BRAZE_WGMMA_OUT_30(d) BRAZE_WGMMA_OUT_29(d), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define BRAZE_WGMMA_OUT_31(d) BRAZE_WGMMA_OUT_30(d), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
#define BRAZE_WGMMA_OUT_32(d) BRAZE_WGMMA_OUT_31(d), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
// clang-format on

// SS_m / RS_m: the operands after the accumulators, as (text, scale-d operand): descriptors
// of A and B, the scale-d predicate and the transpose immediates (A in registers has none).
// clang-format off
#define BRAZE_WGMMA_SS_1 "%4, %5, p, 1, 1, %7, %8", "%6"
#define BRAZE_WGMMA_SS_2 "%8, %9, p, 1, 1, %11, %12", "%10"
#define BRAZE_WGMMA_SS_3 "%12, %13, p, 1, 1, %15, %16", "%14"
#define BRAZE_WGMMA_SS_4 "%16, %17, p, 1, 1, %19, %20", "%18"
#define BRAZE_WGMMA_SS_5 "%20, %21, p, 1, 1, %23, %24", "%22"
#define BRAZE_WGMMA_SS_6 "%24, %25, p, 1, 1, %27, %28", "%26"
#define BRAZE_WGMMA_SS_7 "%28, %29, p, 1, 1, %31, %32", "%30"
#define BRAZE_WGMMA_SS_8 "%32, %33, p, 1, 1, %35, %36", "%34"
#define BRAZE_WGMMA_SS_9 "%36, %37, p, 1, 1, %39, %40", "%38"
#define BRAZE_WGMMA_SS_10 "%40, %41, p, 1, 1, %43, %44", "%42"
#define BRAZE_WGMMA_SS_11 "%44, %45, p, 1, 1, %47, %48", "%46"
#define BRAZE_WGMMA_SS_12 "%48, %49, p, 1, 1, %51, %52", "%50"
#define BRAZE_WGMMA_SS_13 "%52, %53, p, 1, 1, %55, %56", "%54"
#define BRAZE_WGMMA_SS_14 "%56, %57, p, 1, 1, %59, %60", "%58"
#define BRAZE_WGMMA_SS_15 "%60, %61, p, 1, 1, %63, %64", "%62"
#define BRAZE_WGMMA_SS_16 "%64, %65, p, 1, 1, %67, %68", "%66"
#define BRAZE_WGMMA_SS_17 "%68, %69, p, 1, 1, %71, %72", "%70"
#define BRAZE_WGMMA_SS_18 "%72, %73, p, 1, 1, %75, %76", "%74"
#define BRAZE_WGMMA_SS_19 "%76, %77, p, 1, 1, %79, %80", "%78"
#define BRAZE_WGMMA_SS_20 "%80, %81, p, 1, 1, %83, %84", "%82"
#define BRAZE_WGMMA_SS_21 "%84, %85, p, 1, 1, %87, %88", "%86"
#define BRAZE_WGMMA_SS_22 "%88, %89, p, 1, 1, %91, %92", "%90"
#define BRAZE_WGMMA_SS_23 "%92, %93, p, 1, 1, %95, %96", "%94"
#define BRAZE_WGMMA_SS_24 "%96, %97, p, 1, 1, %99, %100", "%98"
#define BRAZE_WGMMA_SS_25 "%100, %101, p, 1, 1, %103, %104", "%102"
#define BRAZE_WGMMA_SS_26 "%104, %105, p, 1, 1, %107, %108", "%106"
#define BRAZE_WGMMA_SS_27 "%108, %109, p, 1, 1, %111, %112", "%110"
#define BRAZE_WGMMA_SS_28 "%112, %113, p, 1, 1, %115, %116", "%114"
#define BRAZE_WGMMA_SS_29 "%116, %117, p, 1, 1, %119, %120", "%118"
#define BRAZE_WGMMA_SS_30 "%120, %121, p, 1, 1, %123, %124", "%122"
#define BRAZE_WGMMA_SS_31 "%124, %125, p, 1, 1, %127, %128", "%126"
#define BRAZE_WGMMA_SS_32 "%128, %129, p, 1, 1, %131, %132", "%130"

#define BRAZE_WGMMA_RS_1 "{%4, %5, %6, %7}, %8, p, 1, 1, %10", "%9"
#define BRAZE_WGMMA_RS_2 "{%8, %9, %10, %11}, %12, p, 1, 1, %14", "%13"
#define BRAZE_WGMMA_RS_3 "{%12, %13, %14, %15}, %16, p, 1, 1, %18", "%17"
#define BRAZE_WGMMA_RS_4 "{%16, %17, %18, %19}, %20, p, 1, 1, %22", "%21"
#define BRAZE_WGMMA_RS_5 "{%20, %21, %22, %23}, %24, p, 1, 1, %26", "%25"
#define BRAZE_WGMMA_RS_6 "{%24, %25, %26, %27}, %28, p, 1, 1, %30", "%29"
#define BRAZE_WGMMA_RS_7 "{%28, %29, %30, %31}, %32, p, 1, 1, %34", "%33"
#define BRAZE_WGMMA_RS_8 "{%32, %33, %34, %35}, %36, p, 1, 1, %38", "%37"
#define BRAZE_WGMMA_RS_9 "{%36, %37, %38, %39}, %40, p, 1, 1, %42", "%41"
#define BRAZE_WGMMA_RS_10 "{%40, %41, %42, %43}, %44, p, 1, 1, %46", "%45"
#define BRAZE_WGMMA_RS_11 "{%44, %45, %46, %47}, %48, p, 1, 1, %50", "%49"
#define BRAZE_WGMMA_RS_12 "{%48, %49, %50, %51}, %52, p, 1, 1, %54", "%53"
#define BRAZE_WGMMA_RS_13 "{%52, %53, %54, %55}, %56, p, 1, 1, %58", "%57"
#define BRAZE_WGMMA_RS_14 "{%56, %57, %58, %59}, %60, p, 1, 1, %62", "%61"
#define BRAZE_WGMMA_RS_15 "{%60, %61, %62, %63}, %64, p, 1, 1, %66", "%65"
#define BRAZE_WGMMA_RS_16 "{%64, %65, %66, %67}, %68, p, 1, 1, %70", "%69"
#define BRAZE_WGMMA_RS_17 "{%68, %69, %70, %71}, %72, p, 1, 1, %74", "%73"
#define BRAZE_WGMMA_RS_18 "{%72, %73, %74, %75}, %76, p, 1, 1, %78", "%77"
#define BRAZE_WGMMA_RS_19 "{%76, %77, %78, %79}, %80, p, 1, 1, %82", "%81"
#define BRAZE_WGMMA_RS_20 "{%80, %81, %82, %83}, %84, p, 1, 1, %86", "%85"
#define BRAZE_WGMMA_RS_21 "{%84, %85, %86, %87}, %88, p, 1, 1, %90", "%89"
#define BRAZE_WGMMA_RS_22 "{%88, %89, %90, %91}, %92, p, 1, 1, %94", "%93"
#define BRAZE_WGMMA_RS_23 "{%92, %93, %94, %95}, %96, p, 1, 1, %98", "%97"
#define BRAZE_WGMMA_RS_24 "{%96, %97, %98, %99}, %100, p, 1, 1, %102", "%101"
#define BRAZE_WGMMA_RS_25 "{%100, %101, %102, %103}, %104, p, 1, 1, %106", "%105"
#define BRAZE_WGMMA_RS_26 "{%104, %105, %106, %107}, %108, p, 1, 1, %110", "%109"
#define BRAZE_WGMMA_RS_27 "{%108, %109, %110, %111}, %112, p, 1, 1, %114", "%113"
#define BRAZE_WGMMA_RS_28 "{%112, %113, %114, %115}, %116, p, 1, 1, %118", "%117"
#define BRAZE_WGMMA_RS_29 "{%116, %117, %118, %119}, %120, p, 1, 1, %122", "%121"
#define BRAZE_WGMMA_RS_30 "{%120, %121, %122, %123}, %124, p, 1, 1, %126", "%125"
#define BRAZE_WGMMA_RS_31 "{%124, %125, %126, %127}, %128, p, 1, 1, %130", "%129"
#define BRAZE_WGMMA_RS_32 "{%128, %129, %130, %131}, %132, p, 1, 1, %134", "%133"
// clang-format on

// The second level expands the table entry into two arguments.
#define BRAZE_WGMMA_TEXT(n, type, acc, operands) BRAZE_WGMMA_TEXT_(n, type, acc, operands)
#define BRAZE_WGMMA_TEXT_(n, type, acc, tail, scale)                                     \
  "{\n.reg .pred p;\nsetp.ne.b32 p, " scale ", 0;\nwgmma.mma_async.sync.aligned.m64n" #n \
  "k16.f32." type "." type " {" acc "}, " tail ";\n}\n"

template <int kN, typename T>
struct Instruction;

// One specialization per (N, type): A and B from shared memory, and A from registers.
#define BRAZE_WGMMA_DEFINE(n, m, Tag, type)                                                      \
  template <>                                                                                    \
  struct Instruction<n, Tag> {                                                                   \
    template <int kTransA, int kTransB>                                                          \
    __device__ __forceinline__ static void ss(float* d, unsigned long long a,                    \
                                              unsigned long long b, int scale_d) {               \
      asm volatile(BRAZE_WGMMA_TEXT(n, type, BRAZE_WGMMA_ACC_##m, BRAZE_WGMMA_SS_##m)            \
                   : BRAZE_WGMMA_OUT_##m(d)                                                      \
                   : "l"(a), "l"(b), "r"(scale_d), "n"(kTransA), "n"(kTransB));                  \
    }                                                                                            \
    template <int kTransB>                                                                       \
    __device__ __forceinline__ static void rs(float* d, const unsigned* a, unsigned long long b, \
                                              int scale_d) {                                     \
      asm volatile(BRAZE_WGMMA_TEXT(n, type, BRAZE_WGMMA_ACC_##m, BRAZE_WGMMA_RS_##m)            \
                   : BRAZE_WGMMA_OUT_##m(d)                                                      \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d),           \
                     "n"(kTransB));                                                              \
    }                                                                                            \
  };

// clang-format off
#define BRAZE_WGMMA_SIZES(X, Tag, type)                                                      \
  X(8, 1, Tag, type) X(16, 2, Tag, type) X(24, 3, Tag, type) X(32, 4, Tag, type)             \
  X(40, 5, Tag, type) X(48, 6, Tag, type) X(56, 7, Tag, type) X(64, 8, Tag, type)            \
  X(72, 9, Tag, type) X(80, 10, Tag, type) X(88, 11, Tag, type) X(96, 12, Tag, type)         \
  X(104, 13, Tag, type) X(112, 14, Tag, type) X(120, 15, Tag, type) X(128, 16, Tag, type)    \
  X(136, 17, Tag, type) X(144, 18, Tag, type) X(152, 19, Tag, type) X(160, 20, Tag, type)    \
  X(168, 21, Tag, type) X(176, 22, Tag, type) X(184, 23, Tag, type) X(192, 24, Tag, type)    \
  X(200, 25, Tag, type) X(208, 26, Tag, type) X(216, 27, Tag, type) X(224, 28, Tag, type)    \
  X(232, 29, Tag, type) X(240, 30, Tag, type) X(248, 31, Tag, type) X(256, 32, Tag, type)
// clang-format on

BRAZE_WGMMA_SIZES(BRAZE_WGMMA_DEFINE, Bf16, "bf16")
BRAZE_WGMMA_SIZES(BRAZE_WGMMA_DEFINE, F16, "f16")

// d (+)= A * B for one k16 step: A is 64x16 at `a` (descriptor), B is 16xkN at `b`. With
// `accumulate` false, d = A * B (the first step of a K loop needs no zeroed accumulators).
// kTransA / kTransB: 0 for K-major tiles (K contiguous), 1 for M- or N-major ones. Asynchronous:
// d is valid only after commitGroup() and waitGroup().
template <int kN, typename T, int kTransA = 0, int kTransB = 0>
__device__ __forceinline__ void mmaSs(float (&d)[kN / 2], unsigned long long a,
                                      unsigned long long b, bool accumulate) {
  static_assert(kN % 8 == 0 && kN >= 8 && kN <= 256, "wgmma N is a multiple of 8 from 8 to 256");
  Instruction<kN, T>::template ss<kTransA, kTransB>(d, a, b, accumulate ? 1 : 0);
}

// As mmaSs with A from registers: `a` is this thread's fragment of the 64x16 A tile, four
// registers of two 16-bit values each, in the accumulator layout of an m64n16 instruction
// (so the output of one layer can feed the next without a trip through shared memory).
template <int kN, typename T, int kTransB = 0>
__device__ __forceinline__ void mmaRs(float (&d)[kN / 2], const unsigned (&a)[4],
                                      unsigned long long b, bool accumulate) {
  static_assert(kN % 8 == 0 && kN >= 8 && kN <= 256, "wgmma N is a multiple of 8 from 8 to 256");
  Instruction<kN, T>::template rs<kTransB>(d, a, b, accumulate ? 1 : 0);
}

}  // namespace wgmma
}  // namespace braze
