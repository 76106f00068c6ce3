using IndexT = int;

extern "C" __global__ void __launch_bounds__(128) braze_70e0c84b8caada44(braze::Tensor<float, 2, IndexT> T0, braze::Tensor<float, 2, IndexT> T1, braze::Tensor<float, 2, IndexT> T3) {
  const IndexT bidx = blockIdx.x;
  const IndexT tidx = threadIdx.x;
  __align__(16) float T4[4];
  __align__(16) float T5[4];
  __align__(16) float T6[4];
  if (bidx * 128 + tidx < braze::ceilDiv(T0.size[0] * T0.size[1], 4)) {
    braze::vectorCopy<float, 4>(&T4[0], &T0.data[bidx * 512 + tidx * 4]);
  }
  if (bidx * 128 + tidx < braze::ceilDiv(T0.size[0] * T0.size[1], 4)) {
    braze::vectorCopy<float, 4>(&T5[0], &T1.data[bidx * 512 + tidx * 4]);
  }
  #pragma unroll
  for (IndexT i2 = 0; i2 < 4; ++i2) {
    __align__(16) float T2[1];
    T2[0] = (T4[i2] * 2.0f);
    T6[i2] = (T2[0] + T5[i2]);
  }
  if (bidx * 128 + tidx < braze::ceilDiv(T0.size[0] * T0.size[1], 4)) {
    braze::vectorCopy<float, 4>(&T3.data[bidx * 512 + tidx * 4], &T6[0]);
  }
}
