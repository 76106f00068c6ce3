// Braze runtime header: the functors of sum and product reductions (the max and min functors
// are in math.cuh, beside maximum and minimum).
#pragma once

namespace braze {

struct SumOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct ProdOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a * b; }
};

}  // namespace braze
