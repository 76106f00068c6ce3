// triu: built from iota, broadcast, sub, ge and where; no OpKind of its own.

#include <gtest/gtest.h>

#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/dtype_shorthands.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using namespace test::dtypes;
using test::throwsError;

TEST(TriuTest, IsAWhereOverIotasAndKeepsTheDtype) {
  for (DataType dtype : {B, I32, I64, F16, BF16, F32, F64}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = dtype, .sizes = {-1, -1, -1}});
    TensorView* y = triu(x, 1);
    fusion.addOutput(y);
    EXPECT_EQ(y->dtype(), dtype);
    EXPECT_EQ(y->rank(), 3);
    ASSERT_NE(y->definition(), nullptr);
    EXPECT_EQ(y->definition()->op(), OpKind::Where);
    EXPECT_EQ(y->definition()->input(1), x);
    int iotas = 0;
    for (const Expr* expr : fusion.exprs()) {
      EXPECT_TRUE(isElementwise(expr->op()) || expr->op() == OpKind::Iota ||
                  expr->op() == OpKind::Broadcast)
          << expr->op();
      iotas += expr->op() == OpKind::Iota;
    }
    EXPECT_EQ(iotas, 2);
  }
}

TEST(TriuTest, NeedsTwoDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1}});
  EXPECT_TRUE(
      throwsError([&] { triu(x, 2); },
                  {"triu(" + x->name() + " (input 0), 2): x has rank 1", "at least 2 dims"}));
  EXPECT_TRUE(throwsError([] { triu(nullptr); }, {"triu: x is a null TensorView"}));
}

}  // namespace
}  // namespace braze
