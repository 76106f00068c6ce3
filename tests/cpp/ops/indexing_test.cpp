// select, index_select, take, embedding_fwd and gather: output shapes, the index inputs, the "dim"
// attribute, and every error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/shape.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::scalarText;
using test::throwsError;

TEST(SelectTest, RemovesTheDim) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, 4, 1}});
  TensorView* y = select(x, -2, -1);
  EXPECT_EQ(y->dtype(), DataType::Float16);
  EXPECT_EQ(domainText(y), "[s0, b]");
  const Expr* def = definitionOf(y, OpKind::Select);
  EXPECT_EQ(def->attribute<int64_t>("dim"), 1);
  ASSERT_EQ(def->inputs().size(), 2u);
  EXPECT_EQ(def->input(0), x);
  // A negative index stays negative: the evaluator counts it from the end.
  const auto* index = def->input(1)->as<Scalar>();
  EXPECT_EQ(index->dtype(), DataType::Index);
  EXPECT_EQ(index->constantInt(), -1);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(SelectTest, SymbolicIndexAndSize) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  Scalar* i = makeInputScalar(fusion, DataType::Int32);
  TensorView* y = select(x, 0, i);
  EXPECT_EQ(domainText(y), "[s1]");
  EXPECT_EQ(scalarText(y->definition()->input(1)->as<Scalar>()), "cast(s2, index)");
  // A constant index on a symbolic size cannot be checked yet.
  EXPECT_EQ(domainText(select(x, 1, 100)), "[s0]");
}

TEST(SelectTest, ErrorIndexOutOfRange) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 3}});
  EXPECT_TRUE(throwsError(
      [&] { select(x, 1, 3); },
      {"select on T0 (input 0)", "index 3 is out of range for dim 1 of size 3", "-3 .. 2"}));
  EXPECT_TRUE(throwsError([&] { select(x, -1, -4); }, {"index -4", "dim -1 of size 3"}));
}

TEST(SelectTest, ErrorBadArguments) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError([&] { select(x, 1, 0); }, {"select", "dim 1", "out of range"}));
  EXPECT_TRUE(throwsError([&] { select(x, 0, 1.0); }, {"select", "index", "must be an integer"}));
  Scalar* f = makeInputScalar(fusion, DataType::Float64);
  EXPECT_TRUE(throwsError([&] { select(x, 0, f); }, {"select", "index", "float64"}));
  EXPECT_TRUE(throwsError([&] { select(nullptr, 0, 0); }, {"select", "null"}));
}

TEST(IndexSelectTest, TakesTheIndexLength) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 6, -1}});
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {-1}});
  TensorView* y = index_select(x, -2, index);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[s0, s2, s1]");
  const Expr* def = definitionOf(y, OpKind::IndexSelect);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{x, index}));
  EXPECT_EQ(def->attribute<int64_t>("dim"), 1);
  EXPECT_TRUE(test::ownsItsDomains(fusion));

  TensorView* one = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {1}});
  EXPECT_EQ(domainText(index_select(x, 0, one)), "[b, 6, s1]");
}

TEST(IndexSelectTest, ErrorIndexTensor) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* floats = makeSymbolicTensor(fusion, 1, DataType::Float32);
  TensorView* matrix = makeSymbolicTensor(fusion, 2, DataType::Int64);
  TensorView* scalar = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {}});
  EXPECT_TRUE(throwsError([&] { index_select(x, 0, floats); },
                          {"index_select of T0 (input 0)", "index tensor T1 (input 1)",
                           "dtype float32", "int32 or int64"}));
  EXPECT_TRUE(throwsError([&] { index_select(x, 0, matrix); },
                          {"index_select of T0", "T2 (input 2)", "rank 2", "must have rank 1"}));
  EXPECT_TRUE(throwsError([&] { index_select(x, 0, scalar); }, {"rank 0", "must have rank 1"}));
  EXPECT_TRUE(throwsError([&] { index_select(x, 0, nullptr); }, {"index_select", "null"}));
  EXPECT_TRUE(throwsError([&] { index_select(x, 2, matrix); }, {"index_select", "dim 2"}));
  Fusion other;
  TensorView* foreign = makeSymbolicTensor(other, 1, DataType::Int64);
  EXPECT_TRUE(
      throwsError([&] { index_select(x, 0, foreign); }, {"index_select", "another fusion"}));
}

TEST(TakeTest, ReplacesTheDimByTheIndexDims) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {-1, 6, -1}});
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1, 3}});
  TensorView* y = take(x, 1, index);
  EXPECT_EQ(y->dtype(), DataType::Float16);
  EXPECT_EQ(domainText(y), "[s0, s2, 3, s1]");
  const Expr* def = definitionOf(y, OpKind::IndexSelect);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{x, index}));
  EXPECT_EQ(def->attribute<int64_t>("dim"), 1);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
  TensorView* scalar = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {}});
  EXPECT_EQ(domainText(take(x, -1, scalar)), "[s0, 6]");
  TensorView* floats = makeSymbolicTensor(fusion, 2, DataType::Float32);
  EXPECT_TRUE(throwsError([&] { take(x, 0, floats); }, {"take of T0", "dtype float32"}));
  EXPECT_TRUE(throwsError([&] { take(x, 3, index); }, {"take", "dim 3"}));
  EXPECT_TRUE(throwsError([&] { take(x, 0, nullptr); }, {"take", "null"}));
}

TEST(EmbeddingFwdTest, LooksUpRowsOfTheWeight) {
  Fusion fusion;
  TensorView* input = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1, -1}});
  TensorView* weight = makeInputTensor(fusion, {.dtype = DataType::BFloat16, .sizes = {10, -1}});
  TensorView* y = embedding_fwd(
      input, weight,
      {.padding_idx = int64_t{-2}, .norm_type = 2.0, .scale_grad_by_freq = false, .sparse = true});
  EXPECT_EQ(y->dtype(), DataType::BFloat16);
  EXPECT_EQ(domainText(y), "[s0, s1, s2]");
  const Expr* def = definitionOf(y, OpKind::IndexSelect);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{weight, input}));
  EXPECT_EQ(def->attribute<int64_t>("dim"), 0);
  TensorView* scalar = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {}});
  EXPECT_EQ(domainText(embedding_fwd(scalar, weight)), "[s2]");
}

TEST(EmbeddingFwdTest, Errors) {
  Fusion fusion;
  TensorView* input = makeSymbolicTensor(fusion, 1, DataType::Int64);
  TensorView* weight = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {10, 4}});
  TensorView* cube = makeSymbolicTensor(fusion, 3);
  TensorView* floats = makeSymbolicTensor(fusion, 1);
  EXPECT_TRUE(throwsError([&] { embedding_fwd(input, weight, {.max_norm = 1.0}); },
                          {"embedding_fwd: max_norm is not supported", "in place",
                           "Pass None and renormalize the weight before the fusion"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(input, cube); },
                          {"embedding_fwd", "weight T2 (input 2)", "rank 3", "must be 2-D"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(floats, weight); },
                          {"embedding_fwd", "input T3 (input 3)", "float32", "int32 or int64"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(input, weight, {.padding_idx = int64_t{10}}); },
                          {"padding_idx 10 is not a row of the weight", "-10 .. 9"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(input, weight, {.padding_idx = 1.5}); },
                          {"padding_idx has dtype float64", "an integer"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(input, weight, {.sparse = int64_t{1}}); },
                          {"sparse has dtype int64", "a bool"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(input, weight, {.norm_type = floats}); },
                          {"norm_type must be a scalar or None", "T3"}));
  EXPECT_TRUE(throwsError([&] { embedding_fwd(nullptr, weight); }, {"embedding_fwd", "null"}));
}

TEST(ScatterTest, KeepsTheInputShape) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, -1}});
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {3, 7}});
  TensorView* src = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {3, 9}});
  TensorView* y = scatter(x, -1, index, src);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[4, s0]");
  const Expr* def = definitionOf(y, OpKind::Scatter);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{x, index, src}));
  EXPECT_EQ(def->attribute<int64_t>("dim"), 1);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(ScatterTest, Errors) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 5}});
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {4, 6}});
  TensorView* src = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 6}});
  TensorView* narrow = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 2}});
  TensorView* halves = makeInputTensor(fusion, {.dtype = DataType::Float16, .sizes = {4, 6}});
  TensorView* flat = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {24}});
  // Along the scattered dim the index may be longer than the input.
  EXPECT_EQ(domainText(scatter(x, 1, index, src)), "[4, 5]");
  EXPECT_TRUE(throwsError([&] { scatter(x, 0, index, src); },
                          {"scatter of T0 (input 0) along dim 0",
                           "T1 (input 1) has size 6 at dim 1", "the input has only 5"}));
  EXPECT_TRUE(throwsError([&] { scatter(x, 1, index, narrow); },
                          {"has size 6 at dim 1 but src has only 2"}));
  EXPECT_TRUE(throwsError([&] { scatter(x, 1, index, halves); },
                          {"src T4 (input 4) has dtype float16", "cast src first"}));
  EXPECT_TRUE(throwsError([&] { scatter(x, 1, index, flat); }, {"src T5", "rank 1", "rank 2"}));
  EXPECT_TRUE(throwsError([&] { scatter(x, 1, index, nullptr); }, {"src is null"}));
  EXPECT_TRUE(throwsError([&] { scatter(x, 1, src, src); }, {"scatter", "dtype float32"}));
}

TEST(GatherTest, TakesTheIndexShape) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {4, -1}});
  TensorView* index = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {3, 7}});
  TensorView* y = gather(x, 1, index);
  EXPECT_EQ(y->dtype(), DataType::Int64);
  EXPECT_EQ(domainText(y), "[3, 7]");
  const Expr* def = definitionOf(y, OpKind::Gather);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{x, index}));
  EXPECT_EQ(def->attribute<int64_t>("dim"), 1);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(GatherTest, ExpandedIndexDimsBecomeData) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* row = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {1, -1}});
  TensorView* index = expand(row, {5, -1});
  EXPECT_EQ(domainText(gather(x, 1, index)), "[5, s2]");
  EXPECT_EQ(domainText(gather(x, -1, row)), "[b, s2]");
}

TEST(GatherTest, Errors) {
  Fusion fusion;
  TensorView* x = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {4, 5}});
  TensorView* wide = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {6, 2}});
  TensorView* flat = makeInputTensor(fusion, {.dtype = DataType::Int64, .sizes = {-1}});
  TensorView* bools = makeInputTensor(fusion, {.dtype = DataType::Bool, .sizes = {2, 2}});
  EXPECT_TRUE(throwsError(
      [&] { gather(x, 1, wide); },
      {"gather of T0 (input 0) along dim 1", "T1 (input 1) has size 6 at dim 0", "only 4"}));
  // Along the gathered dim the index may be longer.
  EXPECT_EQ(domainText(gather(x, 0, wide)), "[6, 2]");
  EXPECT_TRUE(throwsError([&] { gather(x, 0, flat); },
                          {"gather of T0", "rank 1", "must have rank 2 (the rank of the input)"}));
  EXPECT_TRUE(throwsError([&] { gather(x, 0, bools); }, {"gather", "dtype bool"}));
  EXPECT_TRUE(throwsError([&] { gather(x, 2, wide); }, {"gather", "dim 2", "out of range"}));
}

}  // namespace
}  // namespace braze
