// Row programs (braze/codegen/row_program.h): which fusions code generation can write as one,
// how it groups their reductions into passes, and why it refuses the others.

#include <gtest/gtest.h>

#include "braze/codegen/codegen.h"
#include "braze/codegen/row_program.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/normalization_fusions.h"

namespace braze {
namespace {

using test::Normalization;

RowProgramShape shapeOf(const Fusion& fusion) {
  auto analyzed = analyzeRowProgram(fusion);
  EXPECT_TRUE(std::holds_alternative<RowProgramShape>(analyzed)) << std::get<std::string>(analyzed);
  return std::holds_alternative<RowProgramShape>(analyzed) ? std::get<RowProgramShape>(analyzed)
                                                           : RowProgramShape{};
}

std::string problemOf(const Fusion& fusion) {
  auto analyzed = analyzeRowProgram(fusion);
  return std::holds_alternative<std::string>(analyzed) ? std::get<std::string>(analyzed) : "";
}

TEST(RowProgramTest, ReductionsGroupIntoPassesByWhatTheyRead) {
  // Softmax: the max, then the sum of exponentials about it.
  const RowProgramShape softmax =
      shapeOf(*test::makeNormalization(Normalization::Softmax, DataType::BFloat16));
  EXPECT_EQ(softmax.reductions, 2);
  EXPECT_EQ(softmax.passes, 2);
  EXPECT_TRUE(softmax.column_inputs.empty());
  // Softmax backward: one dot product of two row inputs.
  const RowProgramShape backward =
      shapeOf(*test::makeNormalization(Normalization::SoftmaxBackward, DataType::Float32));
  EXPECT_EQ(backward.passes, 1);
  EXPECT_EQ(backward.row_inputs.size(), 2u);
  // RMS norm: one pass, a weight along the columns, y and rstd stored.
  const RowProgramShape rms =
      shapeOf(*test::makeNormalization(Normalization::RmsNorm, DataType::BFloat16));
  EXPECT_EQ(rms.passes, 1);
  EXPECT_EQ(rms.column_inputs.size(), 1u);
  EXPECT_EQ(rms.element_outputs.size(), 1u);
  // The sum and the sum of squares of one row read nothing of each other: one pass.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  fusion.addOutput(sum(x, {1}));
  fusion.addOutput(sum(mul(x, x), {1}));
  fusion.addOutput(mul(x, broadcast(sum(x, {1}), {false, true})));
  const RowProgramShape moments = shapeOf(fusion);
  EXPECT_EQ(moments.reductions, 3);
  EXPECT_EQ(moments.passes, 1);
}

TEST(RowProgramTest, ColumnReductionsAndTheirOutputs) {
  // Layer norm backward: dx, and the weight's and bias's gradients summed over the rows (then
  // cast to bf16: [N] values computed from the sums alone).
  const RowProgramShape layer_norm =
      shapeOf(*test::makeNormalization(Normalization::LayerNormBackward, DataType::BFloat16));
  EXPECT_EQ(layer_norm.reductions, 2);
  EXPECT_EQ(layer_norm.passes, 1);
  EXPECT_EQ(layer_norm.column_reductions, 2);
  EXPECT_EQ(layer_norm.column_outputs.size(), 2u);
  EXPECT_EQ(layer_norm.element_outputs.size(), 1u);
  // A column sum scaled by a scalar and a weight: still [N] values of the sums.
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
  TensorView* w = makeSymbolicTensor(fusion, 1, DataType::Float32);
  fusion.addOutput(mul(sum(mul(x, x), {0}), w));
  fusion.addOutput(max(x, {0}));
  const RowProgramShape sums = shapeOf(fusion);
  EXPECT_EQ(sums.column_reductions, 2);
  EXPECT_EQ(sums.reductions, 0);
  EXPECT_EQ(sums.column_outputs.size(), 2u);
}

TEST(RowProgramTest, KeptOperandsAreCostlyValuesTheOutputsReadAgain) {
  // Softmax's exponentials: summed in the second pass and divided by the sum in the outputs.
  auto softmax = test::makeNormalization(Normalization::Softmax, DataType::BFloat16);
  EXPECT_EQ(shapeOf(*softmax).kept_operands, 1);
  // Layer norm's x - mean is cheap; log-softmax's outputs do not read its exponentials; RMS
  // norm's squares are not read again.
  for (const Normalization kind :
       {Normalization::LayerNorm, Normalization::LogSoftmax, Normalization::RmsNorm}) {
    EXPECT_EQ(shapeOf(*test::makeNormalization(kind, DataType::Float32)).kept_operands, 0)
        << test::toString(kind);
  }
  // Kept: accumulate writes them, and store reads them instead of computing exp again.
  KernelTemplate::RowProgram options{.vector = 8, .keep_reduction_operands = true};
  const auto programOf = [&](const KernelTemplate::RowProgram& row_program) {
    KernelTemplate kernel;
    kernel.source = "extern \"C\" __global__ void BRAZE_KERNEL_NAME(BRAZE_ROW_PARAMETERS) {}\n";
    kernel.row_program = row_program;
    kernel.grid[0] = softmax->constantIndex(1);
    kernel.block[0] = softmax->constantIndex(32);
    return generateFromTemplate(*softmax, kernel).source;
  };
  const std::string kept = programOf(options);
  const size_t store = kept.find("void store(");
  ASSERT_NE(store, std::string::npos) << kept;
  EXPECT_NE(kept.find("static constexpr int kKept = 1;"), std::string::npos) << kept;
  EXPECT_NE(kept.substr(0, store).find("kept[0 + v] = "), std::string::npos) << kept;
  // braze::exp or, as here with bf16 outputs, braze::expNarrow (codegen/narrow_exp.h).
  EXPECT_EQ(kept.substr(store).find("braze::exp"), std::string::npos) << kept;
  EXPECT_NE(kept.substr(store).find("kept[0 + v]"), std::string::npos) << kept;
  // Not asked for: store computes them again.
  options.keep_reduction_operands = false;
  const std::string again = programOf(options);
  EXPECT_NE(again.find("static constexpr int kKept = 0;"), std::string::npos) << again;
  EXPECT_NE(again.substr(again.find("void store(")).find("braze::exp"), std::string::npos) << again;
}

TEST(RowProgramTest, RefusalsNameTheOpAtFault) {
  {
    // A column sum broadcast back over the rows needs every row before any element.
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
    fusion.addOutput(sub(x, broadcast(sum(x, {0}), {true, false})));
    EXPECT_NE(problemOf(fusion).find("combines a reduction over the rows"), std::string::npos)
        << problemOf(fusion);
  }
  {
    // A row reduction of a column sum's values.
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
    fusion.addOutput(sum(sum(x, {0}), {0}));
    EXPECT_NE(problemOf(fusion).find("reduces a value computed from a reduction over the rows"),
              std::string::npos)
        << problemOf(fusion);
  }
  // nvFuser's layer norm backward sums [M, 1] values over their broadcast dim.
  EXPECT_NE(problemOf(*test::makeNvfuserStyleLayerNormBackward(DataType::Float32))
                .find("does not reduce one dim"),
            std::string::npos)
      << problemOf(*test::makeNvfuserStyleLayerNormBackward(DataType::Float32));
  {
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float32);
    fusion.addOutput(var_mean(x, {1}).var);
    EXPECT_NE(problemOf(fusion).find("Welford"), std::string::npos) << problemOf(fusion);
  }
  {
    Fusion fusion;
    fusion.addOutput(sum(makeSymbolicTensor(fusion, 3, DataType::Float32), {2}));
    EXPECT_NE(problemOf(fusion).find("rank 3"), std::string::npos) << problemOf(fusion);
  }
  {
    Fusion fusion;
    TensorView* v = makeSymbolicTensor(fusion, 1, DataType::Float32);
    fusion.addOutput(mul(v, v));
    EXPECT_NE(problemOf(fusion).find("no [M, N] input"), std::string::npos) << problemOf(fusion);
  }
  {
    // A float64 row: a row program computes in float32.
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 2, DataType::Float64);
    fusion.addOutput(sum(x, {1}));
    EXPECT_NE(problemOf(fusion).find("float32"), std::string::npos) << problemOf(fusion);
  }
}

}  // namespace
}  // namespace braze
