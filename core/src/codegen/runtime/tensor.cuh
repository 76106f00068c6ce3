// Braze runtime header: tensor parameters of generated kernels.
#pragma once

namespace braze {

// A tensor parameter: data pointer, then sizes and strides in elements. Generated kernels
// index with IndexT (int or long long), chosen at compile time from the largest tensor.
template <typename T, int N, typename IndexT>
struct Tensor {
  T* data;
  IndexT size[N > 0 ? N : 1];
  IndexT stride[N > 0 ? N : 1];
};

}  // namespace braze
