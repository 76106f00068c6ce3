#pragma once

// Hand-written CUDA kernels with the GeneratedKernel that describes them, standing in for
// generated code so that KernelExecutor is tested on its own. Each comes with the fusion it
// computes, so the reference evaluator can check its results.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "braze/codegen/generated_kernel.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"

namespace braze::codegen {
// Defined in libbraze_core (core/src/codegen/runtime_headers.h, generated at build time).
const std::vector<std::pair<std::string_view, std::string_view>>& runtimeHeaders();
}  // namespace braze::codegen

namespace braze::test {

/// A fusion with a kernel for it.
struct HandWrittenKernel {
  std::unique_ptr<Fusion> fusion = std::make_unique<Fusion>();
  GeneratedKernel kernel;
};

/// The runtime header that declares kernel parameters (braze::Tensor), as generated kernels
/// include it; the other runtime headers belong to code generation and are tested there.
inline std::string runtimeHeaderText() {
  for (const auto& [name, header] : codegen::runtimeHeaders()) {
    if (name == "tensor.cuh") return std::string(header) + "\n";
  }
  return "#error the runtime header tensor.cuh is not embedded\n";
}

namespace detail {

using Kind = KernelParameter::Kind;

inline std::string withIndexType(DataType index_type, std::string_view body) {
  return runtimeHeaderText() + "typedef " + (index_type == DataType::Int32 ? "int" : "long long") +
         " IndexT;\n" + std::string(body);
}

}  // namespace detail

using detail::Kind;

/// out = a + b for two 2-d float32 inputs of any strides (declared non-contiguous), one thread
/// per element, blocks of 128 threads. Parameters: a, b, out.
inline HandWrittenKernel stridedAdd(DataType index_type = DataType::Int32) {
  HandWrittenKernel result;
  Fusion& fusion = *result.fusion;
  const TensorSpec spec{
      .dtype = DataType::Float32, .sizes = {-1, -1}, .contiguity = {false, false}};
  TensorView* a = makeInputTensor(fusion, spec);
  TensorView* b = makeInputTensor(fusion, spec);
  TensorView* out = add(a, b);
  fusion.addOutput(out);
  GeneratedKernel& kernel = result.kernel;
  kernel.kernel_name = index_type == DataType::Int32 ? "strided_add_i32" : "strided_add_i64";
  kernel.source = detail::withIndexType(index_type, R"(
extern "C" __global__ void )" + kernel.kernel_name + R"((braze::Tensor<float, 2, IndexT> a,
                                  braze::Tensor<float, 2, IndexT> b,
                                  braze::Tensor<float, 2, IndexT> out) {
  const IndexT i = (IndexT)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= out.size[0] * out.size[1]) return;
  const IndexT row = i / out.size[1];
  const IndexT col = i % out.size[1];
  out.data[row * out.stride[0] + col * out.stride[1]] =
      a.data[row * a.stride[0] + col * a.stride[1]] + b.data[row * b.stride[0] + col * b.stride[1]];
}
)");
  kernel.parameters = {
      {.kind = Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 0},
      {.kind = Kind::InputTensor,
       .val = b,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 1},
      {.kind = Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float32,
       .rank = 2,
       .fusion_position = 0},
  };
  Val* numel = mul(a->axis(0)->extent(), a->axis(1)->extent());
  kernel.launch.grid[0] = ceil_div(numel, 128);
  kernel.launch.block[0] = fusion.constantIndex(128);
  kernel.index_type = index_type;
  return result;
}

/// out = a * s for a 1-d float32 input and a float32 scalar input, through a workspace of
/// numel floats that must start zeroed: out[i] = atomicAdd(&ws[i], a[i] * s) + a[i] * s.
/// Parameters: a, s, out, workspace.
inline HandWrittenKernel scaleThroughWorkspace() {
  HandWrittenKernel result;
  Fusion& fusion = *result.fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1);
  Scalar* s = makeInputScalar(fusion, DataType::Float32);
  TensorView* out = mul(a, s);
  fusion.addOutput(out);
  GeneratedKernel& kernel = result.kernel;
  kernel.kernel_name = "scale_through_workspace";
  kernel.source = detail::withIndexType(DataType::Int32, R"(
extern "C" __global__ void scale_through_workspace(braze::Tensor<float, 1, IndexT> a, float s,
                                                   braze::Tensor<float, 1, IndexT> out,
                                                   float* workspace) {
  const IndexT i = (IndexT)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= a.size[0]) return;
  const float product = a.data[i * a.stride[0]] * s;
  // Correct only when the workspace starts zeroed.
  out.data[i * out.stride[0]] = atomicAdd(&workspace[i], product) + product;
}
)");
  kernel.parameters = {
      {.kind = Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 0},
      {.kind = Kind::InputScalar,
       .val = s,
       .dtype = DataType::Float32,
       .rank = 0,
       .fusion_position = 1},
      {.kind = Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 0},
      {.kind = Kind::Workspace, .workspace_bytes = mul(a->axis(0)->extent(), 4)->as<Scalar>()},
  };
  kernel.launch.grid[0] = ceil_div(a->axis(0)->extent(), 64);
  kernel.launch.block[0] = fusion.constantIndex(64);
  return result;
}

/// out = a * 2 + 1 for a 1-d float64 input, through a global intermediate t = a * 2 that each
/// thread writes and reads back. Parameters: a, t (GlobalBuffer), out.
inline HandWrittenKernel doubleThroughGlobalBuffer() {
  HandWrittenKernel result;
  Fusion& fusion = *result.fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float64);
  TensorView* t = mul(a, 2.0);
  TensorView* out = add(t, 1.0);
  fusion.addOutput(out);
  GeneratedKernel& kernel = result.kernel;
  kernel.kernel_name = "double_through_global_buffer";
  kernel.source = detail::withIndexType(DataType::Int32, R"(
extern "C" __global__ void double_through_global_buffer(braze::Tensor<double, 1, IndexT> a,
                                                        braze::Tensor<double, 1, IndexT> t,
                                                        braze::Tensor<double, 1, IndexT> out) {
  const IndexT i = (IndexT)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= a.size[0]) return;
  t.data[i * t.stride[0]] = a.data[i * a.stride[0]] * 2.0;
  out.data[i * out.stride[0]] = t.data[i * t.stride[0]] + 1.0;
}
)");
  kernel.parameters = {
      {.kind = Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float64,
       .rank = 1,
       .fusion_position = 0},
      {.kind = Kind::GlobalBuffer, .val = t, .dtype = DataType::Float64, .rank = 1},
      {.kind = Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float64,
       .rank = 1,
       .fusion_position = 0},
  };
  kernel.launch.grid[0] = ceil_div(a->axis(0)->extent(), 256);
  kernel.launch.block[0] = fusion.constantIndex(256);
  return result;
}

/// out = -a for a 1-d float32 input whose size is a multiple of 256 (a launch check), through
/// `shared_bytes` of dynamic shared memory: each block's 256 elements are staged at the end of
/// it, so the launch fails unless all of it is granted. Parameters: a, out.
inline HandWrittenKernel negateThroughSharedMemory(int64_t shared_bytes) {
  HandWrittenKernel result;
  Fusion& fusion = *result.fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1);
  TensorView* out = neg(a);
  fusion.addOutput(out);
  GeneratedKernel& kernel = result.kernel;
  kernel.kernel_name = "negate_through_shared_memory";
  kernel.source = detail::withIndexType(DataType::Int32, R"(
constexpr int kSharedFloats = )" + std::to_string(shared_bytes / 4) +
                                                             R"(;
extern "C" __global__ void negate_through_shared_memory(braze::Tensor<float, 1, IndexT> a,
                                                        braze::Tensor<float, 1, IndexT> out) {
  extern __shared__ float buffer[];
  // The block's 256 elements go to the end of the buffer, so all of it must be usable.
  float* tile = buffer + (kSharedFloats - 256);
  const IndexT i = (IndexT)blockIdx.x * 256 + threadIdx.x;
  tile[threadIdx.x] = a.data[i * a.stride[0]];
  __syncthreads();
  out.data[i * out.stride[0]] = -tile[threadIdx.x];
}
)");
  kernel.parameters = {
      {.kind = Kind::InputTensor,
       .val = a,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 0},
      {.kind = Kind::OutputTensor,
       .val = out,
       .dtype = DataType::Float32,
       .rank = 1,
       .fusion_position = 0},
  };
  kernel.launch.grid[0] = ceil_div(a->axis(0)->extent(), 256);
  kernel.launch.block[0] = fusion.constantIndex(256);
  kernel.launch.dynamic_shared_memory_bytes = fusion.constantIndex(shared_bytes);
  kernel.launch_checks.emplace_back(eq(remainder(a->axis(0)->extent(), 256), 0),
                                    "the size of T0 must be a multiple of 256");
  return result;
}

}  // namespace braze::test
