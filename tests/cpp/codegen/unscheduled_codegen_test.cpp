// Unscheduled fusions (every tensor its own serial loop nest over its logical domain,
// intermediates in global memory) are valid kernels: each is generated and compiled with NVRTC
// for sm_90.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
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

// A square is a product (powf is tens of instructions); other exponents stay pow.
TEST(UnscheduledCodegenTest, SquaresAreProducts) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  fusion.addOutput(pow(x, 2.0));
  fusion.addOutput(pow(x, 3.0));
  const GeneratedKernel generated = generateCuda(fusion);
  EXPECT_EQ(generated.source.find("braze::pow(", 0) != std::string::npos, true);
  size_t pows = 0;
  for (size_t at = generated.source.find("braze::pow("); at != std::string::npos;
       at = generated.source.find("braze::pow(", at + 1))
    ++pows;
  EXPECT_EQ(pows, 1u) << generated.source;
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

// uniform and normal in every floating dtype, seeded by constants and by scalar inputs, 3-D so
// the element's position is a row-major linear index: the kernel calls the runtime's Philox
// functions with it and compiles.
TEST(UnscheduledCodegenTest, UniformAndNormal) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 3);
  Scalar* seed = makeInputScalar(fusion, DataType::Int64);
  Scalar* offset = makeInputScalar(fusion, DataType::Int64);
  std::vector<Operand> shape;
  for (IterDomain* id : x->logical()) shape.emplace_back(id->extent());
  for (DataType dtype :
       {DataType::Float32, DataType::Float64, DataType::Float16, DataType::BFloat16}) {
    fusion.addOutput(uniform(fusion, shape, -1.0, 1.0, dtype, seed, offset));
    fusion.addOutput(normal(fusion, shape, 0.0, 2.0, dtype));
  }
  fusion.addOutput(add(x, uniform(fusion, shape, 0.0, 1.0, DataType::Float32, 3, offset)));
  const GeneratedKernel generated = generateCuda(fusion);
  for (const char* call : {"braze::uniformFloat(", "braze::uniformDouble(", "braze::normalFloat(",
                           "braze::normalDouble("}) {
    EXPECT_NE(generated.source.find(call), std::string::npos) << call << "\n" << generated.source;
  }
  compileForSm90(generated);
}

// float8 tensors as inputs and outputs, cast to and from float32, float16, bfloat16, float64
// and int32, with arithmetic: the kernel stores through the runtime's float8 types and compiles.
TEST(UnscheduledCodegenTest, Float8Casts) {
  Fusion fusion;
  TensorView* e4 = makeInputTensor(fusion, {.dtype = DataType::Float8_e4m3fn, .sizes = {-1, -1}});
  TensorView* e5 = makeInputTensor(fusion, {.dtype = DataType::Float8_e5m2, .sizes = {-1, -1}});
  TensorView* x = makeSymbolicTensor(fusion, 2);
  for (DataType to : {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                      DataType::Int32, DataType::Bool}) {
    fusion.addOutput(cast(e4, to));
    fusion.addOutput(cast(e5, to));
  }
  fusion.addOutput(cast(x, DataType::Float8_e4m3fn));
  fusion.addOutput(cast(cast(x, DataType::Float16), DataType::Float8_e5m2));
  fusion.addOutput(cast(cast(x, DataType::Int64), DataType::Float8_e4m3fn));
  fusion.addOutput(add(e4, e4));
  fusion.addOutput(mul(e5, x));
  const GeneratedKernel generated = generateCuda(fusion);
  for (const char* type : {"braze::Float8e4m3", "braze::Float8e5m2"}) {
    EXPECT_NE(generated.source.find(type), std::string::npos) << type << "\n" << generated.source;
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
