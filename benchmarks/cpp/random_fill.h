#pragma once

// Fills device tensors with uniform random values on the device: benchmark inputs of hundreds
// of MiB would take seconds to generate on the host. Values come from a hash of the element
// index and a seed (splitmix64), so a run is reproducible.

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "braze/driver/cuda_driver.h"
#include "braze/error.h"
#include "braze/ir/data_type.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"

namespace braze::bench {

namespace random_fill_detail {

constexpr const char* kKernelName = "braze_bench_fill_uniform";

// float32 and bfloat16 (rounded to nearest even); grid-stride over the elements.
constexpr const char* kSource = R"(
extern "C" __global__ void braze_bench_fill_uniform(void* out, long long n, int is_bf16,
                                                    unsigned long long seed, float low,
                                                    float high) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
    unsigned long long h = (unsigned long long)i * 0x9E3779B97F4A7C15ull + seed;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    const float value = low + (high - low) * (float)(h >> 40) * (1.0f / 16777216.0f);
    if (is_bf16) {
      unsigned bits = __float_as_uint(value);
      bits += 0x7FFFu + ((bits >> 16) & 1u);
      ((unsigned short*)out)[i] = (unsigned short)(bits >> 16);
    } else {
      ((float*)out)[i] = value;
    }
  }
}
)";

/// The fill kernel, compiled for device 0 and loaded in its primary context (current) once.
inline CUfunction fillFunction() {
  static const CUfunction function = [] {
    const CompiledKernel compiled = CompiledKernel::compile(kSource, kKernelName);
    CUmodule module = nullptr;
    BRAZE_CU(moduleLoadData, &module, compiled.cubin().data());
    CUfunction result = nullptr;
    BRAZE_CU(moduleGetFunction, &result, module, kKernelName);
    return result;  // the module stays loaded for the program's life
  }();
  return function;
}

}  // namespace random_fill_detail

/// Fills contiguous float32 or bfloat16 `tensor` with values uniform in [low, high) on
/// `stream` (asynchronously).
inline void fillUniform(const DeviceTensor& tensor, float low, float high, uint32_t seed,
                        CUstream stream) {
  BRAZE_USER_CHECK(tensor.isContiguous() &&
                   (tensor.dtype() == DataType::Float32 || tensor.dtype() == DataType::BFloat16))
      << "fillUniform fills contiguous float32 or bfloat16 tensors, not " << tensor.describe();
  long long n = tensor.numel();
  if (n == 0) return;
  CUdeviceptr data = tensor.data();
  int is_bf16 = tensor.dtype() == DataType::BFloat16 ? 1 : 0;
  unsigned long long seed_bits = 0x5DEECE66Dull * (uint64_t{seed} + 1);
  void* parameters[] = {&data, &n, &is_bf16, &seed_bits, &low, &high};
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(std::min<long long>((n + 255) / 256, 8192));
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.hStream = stream;
  BRAZE_CU(launchKernelEx, &config, random_fill_detail::fillFunction(), parameters, nullptr);
}

}  // namespace braze::bench
