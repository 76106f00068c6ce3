// Golden text of the math printer. The printer is deterministic, so these files change only
// when the IR or the printer changes on purpose. To accept a new output after reviewing it:
//   BRAZE_UPDATE_GOLDEN=1 ./braze_ir_tests --gtest_filter='PrinterTest.*'

#include "braze/ir/printer.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze {
namespace {

void expectGolden(const Fusion& fusion, const std::string& name) {
  const std::string path = std::string(BRAZE_TEST_DATA_DIR) + "/printer/" + name + ".txt";
  const std::string actual = printMath(fusion);
  if (std::getenv("BRAZE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << "missing golden file " << path
                           << "; run with BRAZE_UPDATE_GOLDEN=1 to create it";
  std::stringstream expected;
  expected << file.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "printed IR differs from " << path;
  // Printing twice gives the same text.
  EXPECT_EQ(actual, printMath(fusion));
}

TEST(PrinterTest, RmsNorm) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::BFloat16, .sizes = {-1, -1}});
  TensorView* weight = makeInputTensor(fusion, {.dtype = DataType::BFloat16, .sizes = {-1}});
  TensorView* xf = cast(x, DataType::Float32);
  TensorView* ms = mean(mul(xf, xf), {-1}, /*keepdim=*/true);
  TensorView* y = mul(mul(xf, rsqrt(add(ms, 1e-6))), cast(weight, DataType::Float32));
  fusion.addOutput(cast(y, DataType::BFloat16));
  expectGolden(fusion, "rms_norm");
}

TEST(PrinterTest, Softmax) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* shifted = sub(x, max(x, {1}, /*keepdim=*/true));
  TensorView* e = exp(shifted);
  fusion.addOutput(div(e, sum(e, {1}, /*keepdim=*/true)));
  expectGolden(fusion, "softmax");
}

TEST(PrinterTest, GeluWithBias) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, 1024}});
  TensorView* bias = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {1024}});
  fusion.addOutput(gelu(add(x, bias), GeluApproximation::Tanh));
  expectGolden(fusion, "gelu_bias");
}

TEST(PrinterTest, ExtentExpressionsAndLayouts) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32,
                                           .sizes = {-1, -1},
                                           .contiguity = {false, true},
                                           .allocation_order = {1, 0}});
  TensorView* sliced = slice(x, 0, int64_t{1}, std::nullopt, int64_t{2});
  TensorView* padded = pad(sliced, {int64_t{1}, int64_t{2}});
  fusion.addOutput(reshape(padded, {int64_t{-1}}));
  expectGolden(fusion, "extents_and_layouts");
}

}  // namespace
}  // namespace braze
