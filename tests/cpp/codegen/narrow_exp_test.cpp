// Exponentials whose every output is rounded to 16 bits are computed as 2^(x log2 e)
// (braze::expNarrow); any other keeps expf (core/src/codegen/narrow_exp.h). CPU tier: the
// generated source, compiled with NVRTC for sm_90. The GPU tiers run these kernels through every
// 16-bit softmax test against the reference evaluator.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"

namespace braze {
namespace {

enum class ExpForm { Narrow, Expf };

// The form of `fusion`'s exponentials (all one form), after compiling its kernel.
ExpForm expFormOf(Fusion& fusion) {
  const GeneratedKernel generated = generateCuda(fusion);
  CompiledKernel::compile(generated.source, generated.kernel_name,
                          {.arch = driver::GpuArch{9, 0, false}});
  // The kernel's body, after the runtime headers (which call braze::exp themselves).
  const std::string body = generated.source.substr(generated.source.find("__global__"));
  const bool narrow = body.find("braze::expNarrow(") != std::string::npos;
  const bool expf = body.find("braze::exp(") != std::string::npos;
  EXPECT_NE(narrow, expf) << "expected one form of exp:\n" << generated.source;
  return narrow ? ExpForm::Narrow : ExpForm::Expf;
}

TensorView* floatInput(Fusion& fusion, DataType dtype) {
  return cast(makeSymbolicTensor(fusion, 2, dtype), DataType::Float32);
}

TensorView* softmaxOf(TensorView* x) {
  TensorView* e = exp(sub(x, max(x, {1}, /*keepdim=*/true)));
  return div(e, sum(e, {1}, /*keepdim=*/true));
}

TEST(NarrowExpTest, SixteenBitSoftmaxTakesTheShortForm) {
  for (DataType dtype : {DataType::BFloat16, DataType::Float16}) {
    Fusion fusion;
    fusion.addOutput(cast(softmaxOf(floatInput(fusion, dtype)), dtype));
    EXPECT_EQ(expFormOf(fusion), ExpForm::Narrow) << dtype;
  }
}

TEST(NarrowExpTest, FloatOutputsKeepExpf) {
  Fusion fusion;
  fusion.addOutput(softmaxOf(makeSymbolicTensor(fusion, 2)));
  EXPECT_EQ(expFormOf(fusion), ExpForm::Expf);
}

// A bf16 result that also leaves as float32 is held to float's accuracy.
TEST(NarrowExpTest, AFloatOutputBesideANarrowOneKeepsExpf) {
  Fusion fusion;
  TensorView* e = exp(floatInput(fusion, DataType::BFloat16));
  fusion.addOutput(cast(e, DataType::BFloat16));
  fusion.addOutput(e);
  EXPECT_EQ(expFormOf(fusion), ExpForm::Expf);
}

// Subtractions, logs and sums of values of either sign can turn a small relative error into a
// large one: log-softmax (the log of a sum of exponentials), 1 - exp(x), and sum(exp(x) * y).
TEST(NarrowExpTest, OpsThatCanCancelKeepExpf) {
  {
    Fusion fusion;
    TensorView* x = floatInput(fusion, DataType::BFloat16);
    TensorView* shifted = sub(x, max(x, {1}, /*keepdim=*/true));
    fusion.addOutput(
        cast(sub(shifted, log(sum(exp(shifted), {1}, /*keepdim=*/true))), DataType::BFloat16));
    EXPECT_EQ(expFormOf(fusion), ExpForm::Expf) << "log-softmax";
  }
  {
    Fusion fusion;
    fusion.addOutput(
        cast(sub(1.0, exp(floatInput(fusion, DataType::BFloat16))), DataType::BFloat16));
    EXPECT_EQ(expFormOf(fusion), ExpForm::Expf) << "1 - exp(x)";
  }
  {
    Fusion fusion;
    TensorView* e = exp(floatInput(fusion, DataType::BFloat16));
    fusion.addOutput(
        cast(sum(mul(e, floatInput(fusion, DataType::BFloat16)), {1}), DataType::BFloat16));
    EXPECT_EQ(expFormOf(fusion), ExpForm::Expf) << "sum(exp(x) * y)";
  }
}

// Sums and additions of positive values cannot cancel: 1 / (1 + exp(-x)) and a sum of
// exponentials scaled by positive constants.
TEST(NarrowExpTest, PositiveSumsTakeTheShortForm) {
  {
    Fusion fusion;
    TensorView* x = floatInput(fusion, DataType::BFloat16);
    fusion.addOutput(cast(reciprocal(add(exp(neg(x)), 1.0)), DataType::BFloat16));
    EXPECT_EQ(expFormOf(fusion), ExpForm::Narrow) << "sigmoid";
  }
  {
    Fusion fusion;
    TensorView* e = mul(exp(floatInput(fusion, DataType::Float16)), 0.5);
    fusion.addOutput(cast(sum(e, {1}), DataType::Float16));
    EXPECT_EQ(expFormOf(fusion), ExpForm::Narrow) << "sum(exp(x) * 0.5)";
  }
}

}  // namespace
}  // namespace braze
