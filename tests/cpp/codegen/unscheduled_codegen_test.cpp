// Unscheduled fusions (every tensor its own serial loop nest over its logical domain,
// intermediates in global memory) are valid kernels: each is generated and compiled with NVRTC
// for sm_90.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"

namespace braze {
namespace {

CompiledKernel compileForSm90(const GeneratedKernel& generated) {
  return CompiledKernel::compile(generated.source, generated.kernel_name,
                                 {.arch = driver::GpuArch{9, 0, false}});
}

TEST(UnscheduledCodegenTest, PointwiseWithBroadcast) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(relu(add(x, broadcast(bias, {true, false}))));
  const GeneratedKernel generated = generateCuda(fusion);
  compileForSm90(generated);
}

TEST(UnscheduledCodegenTest, Softmax) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* e = exp(sub(x, max(x, {1}, true)));
  fusion.addOutput(div(e, sum(e, {1}, true)));
  const GeneratedKernel generated = generateCuda(fusion);
  compileForSm90(generated);
}

TEST(UnscheduledCodegenTest, VarMeanHalf) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  VarMeanResult r = var_mean(x, {1});
  fusion.addOutput(r.var);
  fusion.addOutput(r.mean);
  const GeneratedKernel generated = generateCuda(fusion);
  compileForSm90(generated);
}

// signbit, gcd, nextafter, logical_right_shift, set and triu in every dtype they take: the
// kernel calls the runtime functions (or, for set and triu, plain copies, iotas and a select)
// and compiles.
TEST(UnscheduledCodegenTest, SignbitGcdNextafterShiftSetTriu) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* d = makeInputTensor(fusion, {.dtype = DataType::Float64, .sizes = {-1, -1}});
  TensorView* h = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, -1}});
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1, -1}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1, -1}});
  for (TensorView* t : {x, d, h, a, b}) fusion.addOutput(signbit(t));
  fusion.addOutput(nextafter(x, 0.0));
  fusion.addOutput(nextafter(d, x));
  fusion.addOutput(gcd(a, a));
  fusion.addOutput(gcd(b, a));
  fusion.addOutput(logical_right_shift(a, 3));
  fusion.addOutput(logical_right_shift(b, a));
  fusion.addOutput(set(x));
  fusion.addOutput(triu(h, -1));
  fusion.addOutput(triu(a));
  const GeneratedKernel generated = generateCuda(fusion);
  for (const char* call :
       {"braze::signbit(", "braze::nextafter(", "braze::gcd(", "braze::logicalRightShift("}) {
    EXPECT_NE(generated.source.find(call), std::string::npos) << call << "\n" << generated.source;
  }
  compileForSm90(generated);
}

// stride_order's output is written dense in its order (column-major here: dim 0 has stride 1),
// segment_set's as a plain copy; both compile.
TEST(UnscheduledCodegenTest, StrideOrderWritesItsLayout) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(stride_order(neg(x), {0, 1}));
  fusion.addOutput(segment_set(x));
  const GeneratedKernel generated = generateCuda(fusion);
  EXPECT_NE(generated.source.find("T2.data[i2 + i3 * T0.size[0]] = T1.data["), std::string::npos)
      << generated.source;
  compileForSm90(generated);
}

}  // namespace
}  // namespace braze
