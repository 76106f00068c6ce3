// Tensors a schedule makes opaque to the C++ compiler (Fusion::setOpaqueToCompiler) are assigned
// through braze::opaque, which compiles for values of every size, and only computed tensors can
// be named.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "braze/codegen/codegen.h"
#include "braze/ops/elementwise.h"
#include "braze/runtime/compiled_kernel.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

TEST(OpaqueValuesCodegenTest, AssignmentsGoThroughBrazeOpaqueForEveryValueSize) {
  for (const DataType dtype : {DataType::Float64, DataType::Float32, DataType::Int32,
                               DataType::BFloat16, DataType::Float16, DataType::Float8_e4m3fn}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
    TensorView* narrowed = cast(x, dtype);
    TensorView* doubled = add(narrowed, narrowed);
    fusion.addOutput(doubled);
    fusion.setOpaqueToCompiler(narrowed);
    ASSERT_TRUE(fusion.opaqueToCompiler(narrowed));
    EXPECT_FALSE(fusion.opaqueToCompiler(doubled));
    const GeneratedKernel kernel = generateCuda(fusion);
    const std::string what = std::string(toString(dtype));
    // Exactly one assignment, the cast's.
    const std::regex opaque_assignment(R"(= braze::opaque\()");
    EXPECT_EQ(std::distance(std::sregex_iterator(kernel.source.begin(), kernel.source.end(),
                                                 opaque_assignment),
                            std::sregex_iterator()),
              1)
        << what << "\n"
        << kernel.source;
    EXPECT_FALSE(CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                         {.arch = driver::GpuArch{9, 0, false}})
                     .cubin()
                     .empty())
        << what;
  }
}

TEST(OpaqueValuesCodegenTest, OnlyComputedTensorsOfTheFusion) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1}});
  fusion.addOutput(neg(x));
  EXPECT_TRUE(test::throwsError([&] { fusion.setOpaqueToCompiler(x); },
                                {"setOpaqueToCompiler", "is not a computed tensor"}));
  Fusion other;
  TensorView* y = makeInputTensor(other, {.dtype = DataType::Float32, .sizes = {-1}});
  TensorView* negated = neg(y);
  EXPECT_TRUE(test::throwsError([&] { fusion.setOpaqueToCompiler(negated); },
                                {"is not a computed tensor of this fusion"}));
  EXPECT_TRUE(test::throwsError([&] { fusion.setOpaqueToCompiler(nullptr); }, {"null"}));
}

}  // namespace
}  // namespace braze
