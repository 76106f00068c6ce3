// cat: the summed cat dim, agreement on the other dims, dtype promotion, and every error.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "braze/ops/shape.h"
#include "domain_text.h"
#include "support/error_matchers.h"

namespace braze {
namespace {

using test::definitionOf;
using test::domainText;
using test::throwsError;

TEST(CatTest, SumsTheCatDim) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 3}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, -1}});
  TensorView* c = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 2}});
  TensorView* y = cat({a, b, c}, -1);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  EXPECT_EQ(domainText(y), "[s0, add(add(3, s2), 2)]");
  const Expr* def = definitionOf(y, OpKind::Cat);
  EXPECT_EQ(def->inputs(), (std::vector<Val*>{a, b, c}));
  EXPECT_EQ(def->attribute<int64_t>("dim"), 1);
  EXPECT_TRUE(test::ownsItsDomains(fusion));
}

TEST(CatTest, ConstantSizesFold) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {2, 3}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Int32, .sizes = {5, -1}});
  TensorView* y = cat({a, b}, 0);
  // The other dim takes the constant size of the first input that has one.
  EXPECT_EQ(domainText(y), "[7, 3]");
  EXPECT_EQ(domainText(cat({b, a}, 0)), "[7, 3]");
  EXPECT_EQ(domainText(cat({a}, 1)), "[2, 3]");
}

TEST(CatTest, BroadcastDimsAgreeWithSizeOne) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 4}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 2}});
  EXPECT_EQ(domainText(cat({a, b}, 1)), "[b, 6]");
  EXPECT_EQ(domainText(cat({a, a}, 0)), "[2, 4]");
}

TEST(CatTest, PromotesToOneDtype) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Int32);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* c = makeSymbolicTensor(fusion, 1, DataType::BFloat16);
  TensorView* y = cat({a, b, c}, 0);
  EXPECT_EQ(y->dtype(), DataType::Float32);
  for (Val* input : definitionOf(y, OpKind::Cat)->inputs()) {
    EXPECT_EQ(input->dtype(), DataType::Float32);
    EXPECT_EQ(input->definition()->op(), OpKind::Cast);
  }
  TensorView* d = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* z = cat({b, d}, 0);
  EXPECT_EQ(z->dtype(), DataType::Float16);
  EXPECT_EQ(z->definition()->inputs(), (std::vector<Val*>{b, d}));
}

TEST(CatTest, ErrorDifferentRanks) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 2);
  TensorView* b = makeSymbolicTensor(fusion, 3);
  EXPECT_TRUE(throwsError(
      [&] {
        cat({a, b}, 0);
      },
      {"cat: T1 (input 1) (tensor 1 of the list) has rank 3",
       "T0 (input 0) (tensor 0 of the list) has rank 2", "same rank"}));
}

TEST(CatTest, ErrorMismatchedOtherDims) {
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 3}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {-1, 4}});
  EXPECT_TRUE(throwsError(
      [&] {
        cat({a, b}, 0);
      },
      {"cat: T1 (input 1) (tensor 1 of the list) has size 4 at dim 1",
       "T0 (input 0) (tensor 0 of the list) has size 3", "every dim except the cat dim 0"}));
  // A broadcast dim has size 1 and must agree like any other.
  TensorView* c = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 3}});
  TensorView* d = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {2, 3}});
  EXPECT_TRUE(throwsError(
      [&] {
        cat({c, d}, 1);
      },
      {"T3 (input 3) (tensor 1 of the list) has size 2 at dim 0", "has size 1"}));
}

TEST(CatTest, ErrorBadLists) {
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1);
  TensorView* scalar = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  EXPECT_TRUE(throwsError([&] { cat({}, 0); }, {"cat", "empty"}));
  EXPECT_TRUE(throwsError([&] { cat({a, nullptr}, 0); }, {"cat", "tensor 1", "null"}));
  EXPECT_TRUE(throwsError([&] { cat({scalar, scalar}, 0); }, {"cat", "0-d", "unsqueeze"}));
  EXPECT_TRUE(throwsError([&] { cat({a}, 1); }, {"cat", "dim 1", "out of range"}));
  Fusion other;
  TensorView* foreign = makeSymbolicTensor(other, 1);
  EXPECT_TRUE(throwsError([&] { cat({a, foreign}, 0); }, {"cat", "another fusion"}));
}

}  // namespace
}  // namespace braze
