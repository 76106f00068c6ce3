// A generated kernel carries only the runtime headers it uses (core/src/codegen/
// runtime_prelude.cpp): what it leaves out is never needed, and the machine code is the same
// as with every header in front.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/compiled_kernel.h"
#include "support/scheduled_suite.h"

namespace braze {
namespace {

using test::ScheduledCase;

CompiledKernel compilePtx(const std::string& source, const std::string& kernel_name) {
  return CompiledKernel::compile(source, kernel_name,
                                 {.arch = driver::GpuArch{9, 0, false}, .ptx_only = true});
}

bool carries(const GeneratedKernel& kernel, const std::string& header) {
  return kernel.source.find("// ---- " + header + " ----") != std::string::npos;
}

// The headers a kernel's source carries, in order.
std::vector<std::string> headersOf(const GeneratedKernel& kernel) {
  std::vector<std::string> headers;
  const std::string marker = "// ---- ";
  for (size_t at = kernel.source.find(marker); at != std::string::npos;
       at = kernel.source.find(marker, at + 1)) {
    const size_t begin = at + marker.size();
    headers.push_back(kernel.source.substr(begin, kernel.source.find(' ', begin) - begin));
  }
  return headers;
}

GeneratedKernel generatedCase(const std::string& name) {
  return generateCuda(*test::findScheduledCase(name).build());
}

TEST(RuntimePreludeTest, APointwiseKernelCarriesNoReductionCode) {
  const GeneratedKernel kernel = generatedCase("pointwise_vectorize");
  EXPECT_EQ(headersOf(kernel), (std::vector<std::string>{"index.cuh", "tensor.cuh", "vector.cuh"}))
      << kernel.source;
  for (const char* absent : {"blockReduce", "gridReduce", "WelfordTriplet", "struct SumOp",
                             "BRAZE_FLOAT_FUNCTION", "maximum", "struct __align__(2) Half"}) {
    EXPECT_EQ(kernel.source.find(absent), std::string::npos) << absent;
  }
}

TEST(RuntimePreludeTest, AReductionCarriesWhatItCallsAndWhatThatNeeds) {
  // Softmax over rows of 512: block reductions with MaxOp (beside maximum in math.cuh, which
  // needs the float functions and the limits) and SumOp; constant extents, so no ceilDiv; no
  // grid reduction, no Welford.
  const GeneratedKernel softmax = generatedCase("softmax");
  EXPECT_EQ(headersOf(softmax),
            (std::vector<std::string>{"limits.cuh", "float_functions.cuh", "math.cuh",
                                      "reduction_ops.cuh", "tensor.cuh", "block_reduction.cuh"}))
      << softmax.source;
  EXPECT_EQ(softmax.source.find("gridReduce"), std::string::npos);
  EXPECT_EQ(softmax.source.find("WelfordTriplet"), std::string::npos);

  // A grid reduction needs the block reduction (its finishing block) and Welford's loads.
  const GeneratedKernel columns = generatedCase("grid_reduction_columns");
  EXPECT_TRUE(carries(columns, "grid_reduction.cuh"));
  EXPECT_TRUE(carries(columns, "block_reduction.cuh"));
  EXPECT_TRUE(carries(columns, "welford.cuh"));
  EXPECT_FALSE(carries(columns, "math.cuh"));

  const GeneratedKernel welford = generatedCase("welford_block");
  EXPECT_TRUE(carries(welford, "welford.cuh"));
  EXPECT_TRUE(carries(welford, "block_reduction.cuh"));
  EXPECT_FALSE(carries(welford, "grid_reduction.cuh"));
}

TEST(RuntimePreludeTest, TheKernelNameDoesNotDependOnTheHeaders) {
  const GeneratedKernel kernel = generatedCase("layer_norm");
  const std::string all = sourceWithAllRuntimeHeaders(kernel);
  EXPECT_GT(all.size(), kernel.source.size());
  EXPECT_EQ(all.substr(all.find("using IndexT")),
            kernel.source.substr(kernel.source.find("using IndexT")));
  for (const char* header : {"types.cuh", "index.cuh", "limits.cuh", "float_functions.cuh",
                             "math.cuh", "reduction_ops.cuh", "tensor.cuh", "vector.cuh",
                             "welford.cuh", "block_reduction.cuh", "grid_reduction.cuh"}) {
    EXPECT_NE(all.find("// ---- " + std::string(header) + " ----"), std::string::npos) << header;
  }
}

// Every elementwise function codegen can call is found in a header, compiles, and compiles to
// the same PTX as with every header: float functions, activations, comparisons, integer math.
TEST(RuntimePreludeTest, EveryElementwiseFunctionIsFound) {
  using Unary = TensorView* (*)(TensorView*);
  using Binary = TensorView* (*)(TensorView*, TensorView*);
  Fusion floats;
  TensorView* x = makeSymbolicTensor(floats, 1);
  TensorView* y = makeSymbolicTensor(floats, 1);
  const Unary float_unary[] = {abs,     exp,   exp2,       expm1, log,   log2,     log1p,
                               sqrt,    rsqrt, reciprocal, sin,   cos,   tan,      tanh,
                               sigmoid, relu,  silu,       erf,   erfc,  floor,    ceil,
                               round,   trunc, sign,       isnan, isinf, isfinite, signbit};
  for (Unary op : float_unary) floats.addOutput(op(x));
  floats.addOutput(gelu(x));
  floats.addOutput(gelu(x, GeluApproximation::Tanh));
  const Binary float_binary[] = {remainder, fmod, pow, maximum, minimum, atan2, nextafter};
  for (Binary op : float_binary) floats.addOutput(op(x, y));
  floats.addOutput(clamp(x, Operand(y), Operand(1.0)));
  floats.addOutput(lerp(x, Operand(y), Operand(0.25)));

  Fusion integers;
  TensorView* a = makeSymbolicTensor(integers, 1, DataType::Int64);
  TensorView* b = makeSymbolicTensor(integers, 1, DataType::Int64);
  const Unary integer_unary[] = {abs, floor, sign, signbit};
  for (Unary op : integer_unary) integers.addOutput(op(a));
  const Binary integer_binary[] = {remainder, fmod,       ceil_div,    pow, maximum,
                                   minimum,   left_shift, right_shift, gcd, logical_right_shift};
  for (Binary op : integer_binary) integers.addOutput(op(a, b));
  // int32 and float64 overloads of the new integer and float functions.
  TensorView* c = makeSymbolicTensor(integers, 1, DataType::Int32);
  integers.addOutput(gcd(c, c));
  integers.addOutput(logical_right_shift(c, c));
  integers.addOutput(signbit(c));
  TensorView* d = makeSymbolicTensor(floats, 1, DataType::Float64);
  floats.addOutput(nextafter(d, d));
  floats.addOutput(signbit(d));

  for (Fusion* fusion : {&floats, &integers}) {
    const GeneratedKernel kernel = generateCuda(*fusion);
    const CompiledKernel used = compilePtx(kernel.source, kernel.kernel_name);
    const CompiledKernel all = compilePtx(sourceWithAllRuntimeHeaders(kernel), kernel.kernel_name);
    EXPECT_EQ(used.ptx(), all.ptx());
  }
}

// The scheduled suite (pointwise, reductions, Welford, grid reductions, normalizations) gives
// the same PTX with the headers it uses as with every header.
class RuntimePreludeSuiteTest : public ::testing::TestWithParam<ScheduledCase> {};

TEST_P(RuntimePreludeSuiteTest, SamePtxAsWithEveryHeader) {
  const GeneratedKernel kernel = generateCuda(*GetParam().build());
  const CompiledKernel used = compilePtx(kernel.source, kernel.kernel_name);
  const CompiledKernel all = compilePtx(sourceWithAllRuntimeHeaders(kernel), kernel.kernel_name);
  EXPECT_EQ(used.ptx(), all.ptx()) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Suite, RuntimePreludeSuiteTest,
                         ::testing::ValuesIn(test::scheduledSuite()),
                         [](const ::testing::TestParamInfo<ScheduledCase>& info) {
                           return info.param.name;
                         });

// And the same cubin, for a kernel with block reductions (ptxas gets the same PTX and options).
TEST(RuntimePreludeTest, SameCubinAsWithEveryHeader) {
  const GeneratedKernel kernel = generatedCase("softmax");
  const CompileOptions sm90{.arch = driver::GpuArch{9, 0, false}};
  EXPECT_EQ(CompiledKernel::compile(kernel.source, kernel.kernel_name, sm90).cubin(),
            CompiledKernel::compile(sourceWithAllRuntimeHeaders(kernel), kernel.kernel_name, sm90)
                .cubin());
}

}  // namespace
}  // namespace braze
