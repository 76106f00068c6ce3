// outputsProblem: the refusals every scheduler shares, each with its message.

#include "braze/sched/outputs_problem.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"

namespace braze {
namespace {

using ::testing::HasSubstr;

TEST(OutputsProblem, NoOutputsScalarOutputsAndInputOutputs) {
  Fusion empty;
  makeSymbolicTensor(empty, 1);
  EXPECT_EQ(outputsProblem(empty), "the fusion has no outputs");

  Fusion scalar;
  Scalar* s = makeInputScalar(scalar, DataType::Float32);
  scalar.addOutput(s);
  EXPECT_THAT(outputsProblem(scalar).value(), HasSubstr("is a scalar, not a tensor"));

  Fusion passthrough;
  TensorView* x = makeSymbolicTensor(passthrough, 1);
  passthrough.addOutput(neg(x));
  passthrough.addOutput(x);
  EXPECT_THAT(outputsProblem(passthrough).value(),
              HasSubstr("output " + x->name() + " is also an input"));

  Fusion fine;
  fine.addOutput(neg(makeSymbolicTensor(fine, 2)));
  EXPECT_EQ(outputsProblem(fine), std::nullopt);
}

TEST(OutputsProblem, OutputsOfAnotherRankThanTheReference) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* y = neg(x);
  TensorView* z = neg(makeSymbolicTensor(fusion, 1));
  fusion.addOutput(y);
  EXPECT_EQ(outputRankProblem(fusion, y), std::nullopt);
  fusion.addOutput(z);
  EXPECT_EQ(outputRankProblem(fusion, y).value_or(""),
            "outputs " + y->name() + " and " + z->name() +
                " have different ranks; one loop cannot cover both");
}

}  // namespace
}  // namespace braze
