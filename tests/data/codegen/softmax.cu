using IndexT = int;

extern "C" __global__ void __launch_bounds__(128) braze_3333df0c06b5b259(braze::Tensor<float, 2, IndexT> T0, braze::Tensor<float, 2, IndexT> T7) {
  const IndexT bidx = blockIdx.x;
  const IndexT tidx = threadIdx.x;
  __shared__ __align__(16) char braze_smem_bytes[1024];
  const braze::BlockScratch<128, 1, 1> braze_smem{braze_smem_bytes};
  __align__(16) float T1[1];
  __align__(16) float T4[4];
  __align__(16) float T5[1];
  T1[0] = __int_as_float(0xff800000);
  for (IndexT i0 = 0; i0 < 4; ++i0) {
    T1[0] = braze::maximum(T1[0], T0.data[bidx * 512 + tidx + i0 * 128]);
  }
  {
    float braze_value = T1[0];
    braze_value = braze::blockReduce<true, false, false>(braze_value, braze::MaxOp{}, __int_as_float(0xff800000), braze_smem);
    T1[0] = braze_value;
  }
  #pragma unroll
  for (IndexT i1 = 0; i1 < 4; ++i1) {
    __align__(16) float T2[1];
    __align__(16) float T3[1];
    T2[0] = T1[0];
    T3[0] = (T0.data[bidx * 512 + tidx + i1 * 128] - T2[0]);
    T4[i1] = braze::exp(T3[0]);
  }
  T5[0] = 0.0f;
  #pragma unroll
  for (IndexT i2 = 0; i2 < 4; ++i2) {
    T5[0] = T5[0] + T4[i2];
  }
  {
    float braze_value = T5[0];
    braze_value = braze::blockReduce<true, false, false>(braze_value, braze::SumOp{}, 0.0f, braze_smem);
    T5[0] = braze_value;
  }
  #pragma unroll
  for (IndexT i3 = 0; i3 < 4; ++i3) {
    __align__(16) float T6[1];
    T6[0] = T5[0];
    T7.data[bidx * 512 + tidx + i3 * 128] = (T4[i3] / T6[0]);
  }
}
