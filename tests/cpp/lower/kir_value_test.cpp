// The index algebra of kernel IR: canonical forms and the simplifications generated code
// relies on.

#include "braze/lower/kir_value.h"

#include <gtest/gtest.h>

namespace braze::kir {
namespace {

Value loopIndex(const std::string& name, Value bound, int64_t order) {
  return symbol(name, {.role = SymbolRole::LoopIndex, .bound = std::move(bound), .order = order});
}

Value extent(const std::string& name, int64_t order = 1000) {
  return symbol(name, {.role = SymbolRole::Extent, .order = order});
}

TEST(KirValueTest, FoldsConstantsAndIdentities) {
  const Value x = extent("x");
  EXPECT_EQ((constant(3) + constant(4)).constantValue(), 7);
  EXPECT_EQ((constant(3) * constant(4)).constantValue(), 12);
  EXPECT_EQ(x * 1, x);
  EXPECT_EQ(x + 0, x);
  EXPECT_EQ((x * 0).constantValue(), 0);
  EXPECT_EQ(div(x, constant(1)), x);
  EXPECT_EQ(mod(x, constant(1)).constantValue(), 0);
  EXPECT_EQ(div(constant(17), constant(5)).constantValue(), 3);
  EXPECT_EQ(mod(constant(17), constant(5)).constantValue(), 2);
  EXPECT_EQ(ceilDiv(constant(17), constant(5)).constantValue(), 4);
}

TEST(KirValueTest, SumsAndProductsAreCanonical) {
  const Value a = extent("a", 1);
  const Value b = extent("b", 2);
  EXPECT_EQ(a + b, b + a);
  EXPECT_EQ(a * b, b * a);
  EXPECT_EQ((a + b) * 2, a * 2 + b * 2);
  EXPECT_EQ(a + a, a * 2);
  EXPECT_EQ((a - a).constantValue(), 0);
  EXPECT_EQ((a + b) - b, a);
}

TEST(KirValueTest, PrintsOuterIndicesFirstWithCoefficientsLast) {
  const Value bidx = symbol("bidx", {.role = SymbolRole::ThreadIndex, .order = 0});
  const Value tidx =
      symbol("tidx", {.role = SymbolRole::ThreadIndex, .bound = constant(128), .order = 3});
  const Value v = loopIndex("i3", constant(4), 103);
  EXPECT_EQ(((bidx * 128 + tidx) * 4 + v).toString(), "bidx * 512 + tidx * 4 + i3");
  EXPECT_EQ(div(bidx + tidx, extent("T0.size[1]")).toString(), "(bidx + tidx) / T0.size[1]");
}

TEST(KirValueTest, DivisionAndModuloUndoASplit) {
  const Value i = loopIndex("i", extent("n"), 100);
  const Value j = loopIndex("j", constant(4), 101);
  const Value index = i * 4 + j;
  EXPECT_EQ(div(index, constant(4)), i);
  EXPECT_EQ(mod(index, constant(4)), j);
  // Partly divisible: the divisible part leaves the division.
  EXPECT_EQ(div(i * 8 + j, constant(4)), i * 2);
  EXPECT_EQ(mod(i * 8 + j + 4, constant(8)).toString(), "j + 4");
}

TEST(KirValueTest, KeepsDivisionWhenTheRemainderIsUnbounded) {
  const Value i = loopIndex("i", extent("n"), 100);
  const Value k = loopIndex("k", extent("m"), 101);
  EXPECT_EQ(div(i * 4 + k, constant(4)).kind(), ValueKind::Sum);
  EXPECT_EQ(div(i * 4 + k, constant(4)).toString(), "i + k / 4");
}

TEST(KirValueTest, MergedContiguousDimsFoldBack) {
  // A merge walked back to its dims and dotted with contiguous strides is the merged index.
  const Value e1 = extent("e1", 1001);
  const Value e2 = extent("e2", 1002);
  const Value m = loopIndex("m", Value(), 100);
  EXPECT_EQ(div(m, e1) * e1 + mod(m, e1), m);
  // Three dims: ((m / e2) / e1) * e1 * e2 + ((m / e2) % e1) * e2 + m % e2.
  const Value outer = div(m, e2);
  EXPECT_EQ(div(outer, e1) * e1 * e2 + mod(outer, e1) * e2 + mod(m, e2), m);
  // With constant extents too.
  EXPECT_EQ(div(m, constant(32)) * 32 + mod(m, constant(32)), m);
}

TEST(KirValueTest, ComparisonsProvenFromBounds) {
  const Value n = extent("n");
  const Value i = loopIndex("i", n, 100);
  const Value j = loopIndex("j", constant(4), 101);
  EXPECT_TRUE(lt(i, n).isTrue());
  EXPECT_TRUE(lt(j, constant(4)).isTrue());
  EXPECT_TRUE(lt(j, constant(5)).isTrue());
  EXPECT_TRUE(lt(j, constant(0)).isFalse());
  EXPECT_FALSE(lt(j, constant(3)).isConstant());
  EXPECT_TRUE(lt(mod(i, constant(7)), constant(7)).isTrue());
  EXPECT_TRUE(lt(i + 1, n + 1).isTrue());
  EXPECT_EQ(lt(i * 4 + j, n).toString(), "i * 4 + j < n");
}

TEST(KirValueTest, ConjunctionsDropTruthsAndDuplicates) {
  const Value a = lt(extent("a"), extent("b"));
  EXPECT_TRUE(conjunction({}).isTrue());
  EXPECT_EQ(conjunction({boolean(true), a, a}), a);
  EXPECT_TRUE(conjunction({a, boolean(false)}).isFalse());
  EXPECT_TRUE(logicalNot(logicalNot(a)) == a);
}

TEST(KirValueTest, SubstitutionResimplifies) {
  const Value n = extent("n");
  const Value i = loopIndex("i", n, 100);
  const Value v = loopIndex("v", constant(4), 101);
  const Value predicate = lt(i * 4 + v, n);
  const Value last = substitute(predicate, {{v.key(), constant(3)}});
  EXPECT_EQ(last.toString(), "i * 4 + 3 < n");
  EXPECT_TRUE(dependsOn(predicate, v));
  EXPECT_FALSE(dependsOn(last, v));
  EXPECT_EQ(symbolsOf(predicate).size(), 3u);
}

}  // namespace
}  // namespace braze::kir
