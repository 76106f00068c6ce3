using IndexT = int;

extern "C" __global__ void __launch_bounds__(128) braze_2aa5ea7b4339227b(braze::Tensor<float, 2, IndexT> T0, braze::Tensor<float, 1, IndexT> T1) {
  const IndexT bidx = blockIdx.x;
  const IndexT tidx = threadIdx.x;
  __shared__ __align__(16) char braze_smem_bytes[1024];
  const braze::BlockScratch<128, 1, 1> braze_smem{braze_smem_bytes};
  __align__(16) float T3[1];
  __align__(16) float T2[1];
  T3[0] = 0.0f;
  for (IndexT i0 = 0; i0 < braze::ceilDiv(T0.size[1], 128); ++i0) {
    if (tidx + i0 * 128 < T0.size[1]) {
      T3[0] = T3[0] + T0.data[bidx * T0.size[1] + tidx + i0 * 128];
    }
  }
  T2[0] = 0.0f;
  {
    float braze_value = T3[0];
    braze_value = braze::blockReduce<true, false, false>(braze_value, braze::SumOp{}, 0.0f, braze_smem);
    T2[0] = T2[0] + braze_value;
  }
  if (tidx == 0) {
    T1.data[bidx] = T2[0];
  }
}
