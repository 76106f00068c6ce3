// unsupportedOpProblem: the first op a scheduler's table refuses, named with the table's reason.

#include "braze/sched/unsupported_op_problem.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ir/tensor_view.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"

namespace braze {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::optional<std::string> refuseReductionsAndPermutes(OpKind op) {
  if (op == OpKind::Sum) return "sums are not handled here";
  if (op == OpKind::Permute) return "permutes are not handled here";
  return std::nullopt;
}

TEST(UnsupportedOpProblem, NamesTheFirstRefusedOpWithItsReason) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* s = sum(neg(x), {1});
  fusion.addOutput(permute(broadcast(s, {false, true}), {1, 0}));
  const std::optional<std::string> problem =
      unsupportedOpProblem(fusion, refuseReductionsAndPermutes);
  ASSERT_TRUE(problem.has_value());
  std::ostringstream sum_name;
  sum_name << OpKind::Sum;
  EXPECT_THAT(*problem, StartsWith(sum_name.str() + " is not supported: "));
  EXPECT_THAT(*problem, HasSubstr("sums are not handled here"));

  Fusion elementwise;
  elementwise.addOutput(neg(makeSymbolicTensor(elementwise, 1)));
  EXPECT_EQ(unsupportedOpProblem(elementwise, refuseReductionsAndPermutes), std::nullopt);
}

}  // namespace
}  // namespace braze
