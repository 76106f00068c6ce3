// set: the user's copy op. It is the OpKind::Set that scheduling's cache ops make, with a fresh
// domain of the input's user-visible shape and the input's dtype.

#include <gtest/gtest.h>

#include "braze/ir/printer.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/dtype_shorthands.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using namespace test::dtypes;
using test::throwsError;

TEST(SetTest, CopiesShapeAndDtype) {
  for (DataType dtype : {B, I32, I64, F16, BF16, F32, F64}) {
    Fusion fusion;
    TensorView* x = makeInputTensor(fusion, {.dtype = dtype, .sizes = {-1, 1, 4}});
    TensorView* y = set(x);
    ASSERT_NE(y->definition(), nullptr);
    EXPECT_EQ(y->definition()->op(), OpKind::Set);
    EXPECT_EQ(y->definition()->inputs(), std::vector<Val*>{x});
    EXPECT_TRUE(y->definition()->attributes().empty());
    EXPECT_EQ(y->dtype(), dtype);
    ASSERT_EQ(y->rank(), 3);
    for (int64_t d = 0; d < 3; ++d) {
      EXPECT_NE(y->axis(d), x->axis(d)) << "the copy owns its IterDomains";
      EXPECT_EQ(y->axis(d)->extent(), x->axis(d)->extent());
      EXPECT_EQ(y->axis(d)->iterType(), x->axis(d)->iterType());
    }
  }
}

TEST(SetTest, DropsReducedDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1, -1}});
  TensorView* y = set(sum(x, {1}));
  EXPECT_EQ(y->rank(), 1);
  EXPECT_FALSE(y->hasReduction());
}

TEST(SetTest, PrintsAsSet) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = F32, .sizes = {-1}});
  fusion.addOutput(set(x));
  EXPECT_NE(printMath(fusion).find("set("), std::string::npos) << printMath(fusion);
}

TEST(SetTest, RefusesANullTensor) {
  EXPECT_TRUE(throwsError([] { set(nullptr); }, {"set: x is a null TensorView"}));
}

}  // namespace
}  // namespace braze
