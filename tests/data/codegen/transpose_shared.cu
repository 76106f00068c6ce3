using IndexT = int;

extern "C" __global__ void __launch_bounds__(1024) braze_eaa3706d30a85068(braze::Tensor<float, 2, IndexT> T0, braze::Tensor<float, 2, IndexT> T1) {
  const IndexT bidx = blockIdx.x;
  const IndexT tidx = threadIdx.x;
  const IndexT tidy = threadIdx.y;
  __shared__ __align__(16) float T2[1024];
  if ((bidx / braze::ceilDiv(T0.size[0], 32)) * 32 + tidx < T0.size[1] && (bidx % braze::ceilDiv(T0.size[0], 32)) * 32 + tidy < T0.size[0]) {
    T2[tidx + tidy * 32] = T0.data[(bidx % braze::ceilDiv(T0.size[0], 32)) * T0.size[1] * 32 + (bidx / braze::ceilDiv(T0.size[0], 32)) * 32 + tidx + tidy * T0.size[1]];
  }
  __syncthreads();
  if ((bidx / braze::ceilDiv(T0.size[0], 32)) * 32 + tidy < T0.size[1] && (bidx % braze::ceilDiv(T0.size[0], 32)) * 32 + tidx < T0.size[0]) {
    T1.data[(bidx % braze::ceilDiv(T0.size[0], 32)) * 32 + (bidx / braze::ceilDiv(T0.size[0], 32)) * T0.size[0] * 32 + tidx + tidy * T0.size[0]] = T2[tidx * 32 + tidy];
  }
}
