// scattersAsMatches: a scatter rewritten as matches, a max and a sum gives the reference
// evaluator's scatter results, for each dim, an index smaller than x and than src, negative
// and repeated entries (the last write wins), integer and bool values.

#include "braze/ir/scatter_as_matches.h"

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

struct Case {
  int64_t dim;
  std::vector<int64_t> x, index, src;
  DataType dtype = DataType::Float32;
  int64_t low = 0;  // smallest index entry (negative ones count from the end)
};

// Sizes fixed in the definition (`symbolic` false: differing extents are widened) or known
// only at run time (true: taken as equal, for cases where they are).
void expectSameAsTheReference(const Case& c, uint64_t seed, bool symbolic) {
  auto fusion = std::make_unique<Fusion>();
  auto input = [&](DataType dtype, const std::vector<int64_t>& sizes) {
    if (symbolic) return makeSymbolicTensor(*fusion, static_cast<int64_t>(sizes.size()), dtype);
    return makeInputTensor(*fusion, {.dtype = dtype, .sizes = sizes});
  };
  TensorView* x = input(c.dtype, c.x);
  TensorView* index = input(DataType::Int64, c.index);
  TensorView* src = input(c.dtype, c.src);
  fusion->addOutput(exp(cast(scatter(x, c.dim, index, src), DataType::Float32)));
  std::unique_ptr<Fusion> rewritten = fusion->clone();
  ASSERT_EQ(scattersAsMatches(*rewritten), 1);
  for (const Expr* expr : rewritten->exprs()) EXPECT_NE(expr->op(), OpKind::Scatter);

  test::RandomTensors random(seed);
  const int64_t size = c.x[static_cast<size_t>(c.dim)];
  const std::vector<EvaluatorArgument> inputs = {
      random.uniform(c.dtype, c.x),
      random.uniform(DataType::Int64, c.index, static_cast<double>(c.low),
                     static_cast<double>(size - 1)),
      random.uniform(c.dtype, c.src)};
  const HostTensor expected = std::get<HostTensor>(evaluateFusion(*fusion, inputs)[0]);
  const HostTensor actual = std::get<HostTensor>(evaluateFusion(*rewritten, inputs)[0]);
  test::expectClose(actual, expected);
}

TEST(ScatterAsMatchesTest, GivesTheReferenceResults) {
  const std::vector<Case> cases = {
      {0, {7, 5}, {3, 5}, {3, 5}},
      {1, {4, 9}, {4, 2}, {4, 2}},
      {1, {4, 9, 3}, {2, 4, 3}, {3, 6, 3}},     // index smaller than x and src
      {2, {2, 3, 16}, {2, 3, 16}, {2, 3, 16}},  // as many entries as positions: repeats
      {0, {6, 4}, {2, 4}, {2, 4}, DataType::Int64},
      {1, {3, 5}, {3, 3}, {3, 3}, DataType::Float32, -5},  // negative entries
      {1, {3, 8}, {3, 1}, {3, 1}, DataType::BFloat16},     // one position per row
      {0, {5, 3}, {4, 3}, {4, 3}, DataType::Bool},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expectSameAsTheReference(cases[i], 40 + i, /*symbolic=*/false);
    const Case& c = cases[i];
    bool equal = c.index == c.src;
    for (size_t d = 0; d < c.x.size(); ++d)
      equal = equal && (static_cast<int64_t>(d) == c.dim || c.index[d] == c.x[d]);
    if (equal) expectSameAsTheReference(c, 60 + i, /*symbolic=*/true);
  }
}

}  // namespace
}  // namespace braze
