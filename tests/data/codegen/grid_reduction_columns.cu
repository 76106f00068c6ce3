using IndexT = int;

extern "C" __global__ void __launch_bounds__(256) braze_f63ddf60d2fa026e(braze::Tensor<float, 2, IndexT> T0, braze::Tensor<float, 1, IndexT> T1, char* workspace2) {
  const IndexT bidx = blockIdx.x;
  const IndexT bidy = blockIdx.y;
  const IndexT tidx = threadIdx.x;
  const IndexT tidy = threadIdx.y;
  __shared__ __align__(16) char braze_smem_bytes[2048];
  const braze::BlockScratch<32, 8, 1> braze_smem{braze_smem_bytes};
  bool finished0 = false;
  __align__(16) float T2[1];
  T2[0] = 0.0f;
  {
    float braze_value = (bidx * 32 + tidx < T0.size[1] && bidy * 8 + tidy < T0.size[0]) ? T0.data[bidx * 32 + bidy * T0.size[1] * 8 + tidx + tidy * T0.size[1]] : 0.0f;
    braze_value = braze::blockReduce<false, true, false>(braze_value, braze::SumOp{}, 0.0f, braze_smem);
    finished0 = braze::gridReduce<false, true, false, false, true, false>(braze_value, braze::SumOp{}, 0.0f, workspace2, braze_smem);
    T2[0] = T2[0] + braze_value;
  }
  if (bidx * 32 + tidx < T0.size[1] && tidy == 0 && finished0) {
    T1.data[bidx * 32 + tidx] = T2[0];
  }
}
