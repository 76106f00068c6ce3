// Saved fusion definitions (braze/serde/fusion_definition.h): every op kind and the
// normalizations survive a save and a load (same canonical form, identical results on the
// reference evaluator), and damaged or hostile files are Errors that say what is wrong.

#include "braze/serde/fusion_definition.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/sharding.h"
#include "braze/ir/stream_axes.h"
#include "braze/ir/structural_hash.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/reduction.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "braze/serde/fusion_definition_generated.h"
#include "support/error_matchers.h"
#include "support/normalization_fusions.h"
#include "support/random_tensor.h"

namespace braze::serde {
namespace {

namespace fs = std::filesystem;
using test::RandomTensors;
using test::throwsError;

struct Case {
  std::string name;
  std::function<void(Fusion&)> body;
  std::function<std::vector<EvaluatorArgument>(RandomTensors&)> inputs;
};

TensorView* input(Fusion& fusion, std::vector<int64_t> sizes, DataType dtype = DataType::Float32) {
  return makeInputTensor(fusion, {.dtype = dtype, .sizes = std::move(sizes)});
}

// One fusion per op kind (or family), with representative attributes, constants and layouts.
std::vector<Case> opCases() {
  std::vector<Case> cases;
  cases.push_back(
      {"unary",
       [](Fusion& f) {
         TensorView* x = input(f, {-1, -1});
         using Unary = TensorView* (*)(TensorView*);
         for (Unary op : std::initializer_list<Unary>{
                  &braze::neg,         &braze::abs,    &braze::exp,        &braze::exp2,
                  &braze::expm1,       &braze::log,    &braze::log2,       &braze::log1p,
                  &braze::sqrt,        &braze::rsqrt,  &braze::reciprocal, &braze::sin,
                  &braze::cos,         &braze::tan,    &braze::tanh,       &braze::sigmoid,
                  &braze::relu,        &braze::silu,   &braze::erf,        &braze::erfc,
                  &braze::floor,       &braze::ceil,   &braze::round,      &braze::trunc,
                  &braze::sign,        &braze::isnan,  &braze::isinf,      &braze::isfinite,
                  &braze::logical_not, &braze::signbit}) {
           f.addOutput(op(x));
         }
         f.addOutput(gelu(x, GeluApproximation::Tanh));
         f.addOutput(gelu(x));
         f.addOutput(cast(x, DataType::BFloat16));
         f.addOutput(bitwise_not(input(f, {-1}, DataType::Int32)));
       },
       [](RandomTensors& r) {
         return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {3, 5}),
                                               r.uniform(DataType::Int32, {4})};
       }});
  cases.push_back({"binary",
                   [](Fusion& f) {
                     TensorView* a = input(f, {-1, -1});
                     TensorView* b = input(f, {1, -1});  // a broadcast dim
                     Scalar* s = makeInputScalar(f, DataType::Float64);
                     using Binary = TensorView* (*)(TensorView*, TensorView*);
                     for (Binary op : std::initializer_list<Binary>{
                              &braze::add,        &braze::sub,         &braze::mul,
                              &braze::div,        &braze::truediv,     &braze::remainder,
                              &braze::fmod,       &braze::pow,         &braze::maximum,
                              &braze::minimum,    &braze::atan2,       &braze::eq,
                              &braze::ne,         &braze::lt,          &braze::le,
                              &braze::gt,         &braze::ge,          &braze::logical_and,
                              &braze::logical_or, &braze::logical_xor, &braze::nextafter}) {
                       f.addOutput(op(a, b));
                     }
                     f.addOutput(add(mul(a, 2.5), s));
                     f.addOutput(sub(1, a));
                     TensorView* i = input(f, {-1}, DataType::Int64);
                     TensorView* j = input(f, {-1}, DataType::Int64);
                     for (Binary op : std::initializer_list<Binary>{
                              &braze::bitwise_and, &braze::bitwise_or, &braze::bitwise_xor,
                              &braze::left_shift, &braze::right_shift, &braze::ceil_div,
                              &braze::div, &braze::gcd, &braze::logical_right_shift}) {
                       f.addOutput(op(i, j));
                     }
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{
                         r.nonZero(DataType::Float32, {3, 4}), r.nonZero(DataType::Float32, {1, 4}),
                         ScalarValue(0.75), r.uniform(DataType::Int64, {6}, 0, 9),
                         r.nonZero(DataType::Int64, {6}, 1, 3, 1)};
                   }});
  cases.push_back({"ternary",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     TensorView* y = input(f, {-1, -1});
                     f.addOutput(where(gt(x, 0.0), x, 0.0));
                     f.addOutput(clamp(x, -0.5, 0.5));
                     f.addOutput(lerp(x, y, 0.3));
                     f.addOutput(addcmul(x, y, x, 0.5));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 3}),
                                                           r.uniform(DataType::Float32, {2, 3})};
                   }});
  cases.push_back({"reductions",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1, 4});
                     f.addOutput(sum(x, {1}));
                     f.addOutput(prod(x, {0}, true));
                     f.addOutput(max(x, {-1}, true));
                     f.addOutput(min(x, {0, 2}));
                     f.addOutput(mean(x, {1}));
                     f.addOutput(sum(input(f, {-1, -1}, DataType::BFloat16), {1}));
                     f.addOutput(sum(input(f, {-1}, DataType::Int32), {0}));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 3, 4}),
                                                           r.uniform(DataType::BFloat16, {3, 8}),
                                                           r.uniform(DataType::Int32, {5})};
                   }});
  cases.push_back({"welford",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     WelfordResult w = welford(x, {1});
                     f.addOutput(w.avg);
                     f.addOutput(w.m2);
                     f.addOutput(w.n);
                     f.addOutput(var(x, {0}, 0, true));
                     VarMeanResult vm = var_mean(input(f, {-1, -1}, DataType::Float16), {1});
                     f.addOutput(vm.var);
                     f.addOutput(vm.mean);
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {3, 5}),
                                                           r.uniform(DataType::Float16, {2, 6})};
                   }});
  cases.push_back({"broadcast_expand_squeeze",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1});
                     TensorView* y = input(f, {-1, 1});
                     f.addOutput(broadcast(x, {true, false, true}));
                     f.addOutput(expand(y, {-1, 5}));
                     f.addOutput(expand(unsqueeze(x, 0), {3, -1}));
                     f.addOutput(broadcast_in_dim(x, {2, x->axis(0)->extent(), 3}, {1}));
                     f.addOutput(squeeze(y, {1}));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {4}),
                                                           r.uniform(DataType::Float32, {4, 1})};
                   }});
  cases.push_back({"reshape_permute",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1, 4});
                     f.addOutput(reshape(x, {x->axis(0)->extent(), int64_t{-1}}));
                     f.addOutput(flatten(x));
                     f.addOutput(reshape(input(f, {6, 4}), {int64_t{3}, int64_t{-1}}));
                     f.addOutput(permute(x, {2, 0, 1}));
                     f.addOutput(transpose(x, 0, 1));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 3, 4}),
                                                           r.uniform(DataType::Float32, {6, 4})};
                   }});
  cases.push_back({"scans",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     TensorView* h = input(f, {-1, -1}, DataType::Float16);
                     TensorView* i = input(f, {-1, -1}, DataType::Int32);
                     f.addOutput(cumsum(x, 1));
                     f.addOutput(cumprod(h, -2));
                     f.addOutput(cummax(i, 0));
                     f.addOutput(cummin(x, -1));
                     f.addOutput(cumsum(i, 1));
                     f.addOutput(cumsum(i, 0, DataType::Int32));
                     f.addOutput(cumprod(x, 0, DataType::Float64));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{
                         r.uniform(DataType::Float32, {3, 5}), r.uniform(DataType::Float16, {3, 5}),
                         r.uniform(DataType::Int32, {3, 5}, -9, 9)};
                   }});
  cases.push_back({"set",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, 3});
                     f.addOutput(set(exp(x)));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 3})};
                   }});
  cases.push_back({"copies",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, 1, 4});
                     f.addOutput(neg(segment_set(exp(x))));
                     f.addOutput(stride_order(x, {0, 2, 1}));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 1, 4})};
                   }});
  cases.push_back({"slice",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     TensorView* c = input(f, {10, 8});
                     Scalar* s = makeInputScalar(f, DataType::Int64);
                     f.addOutput(slice(x, 0, int64_t{1}, std::nullopt));
                     f.addOutput(slice(x, 1, int64_t{-3}, std::nullopt));
                     f.addOutput(slice(x, 1, int64_t{0}, int64_t{2}));
                     f.addOutput(slice(x, 0, int64_t{1}, int64_t{-1}, int64_t{2}));
                     f.addOutput(slice(x, 1, s, std::nullopt));
                     f.addOutput(slice(x, 0, int64_t{0}, s));
                     f.addOutput(slice(c, {{int64_t{2}, int64_t{9}, int64_t{3}}, {int64_t{-5}}}));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {7, 6}),
                                                           r.uniform(DataType::Float32, {10, 8}),
                                                           ScalarValue(int64_t{2})};
                   }});
  // Bounds already normalized (as repr writes symbolic slices): written as they are, with the
  // attribute manual_normalization, since no user bound normalizes into them.
  cases.push_back({"normalized_slice",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     Scalar* a = makeInputScalar(f, DataType::Int64);
                     Scalar* b = makeInputScalar(f, DataType::Int64);
                     Scalar* columns = x->logicalNoReductions()[1]->logicalExtent();
                     TensorView* y = slice(x, {{a, b}, {int64_t{1}, columns, int64_t{2}}},
                                           /*manual_normalization=*/true);
                     f.addOutput(y);
                     Scalar* rows = y->logicalNoReductions()[0]->logicalExtent();
                     f.addOutput(slice(y, {{int64_t{0}, rows}, {a, int64_t{3}}}, true));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {7, 6}),
                                                           ScalarValue(int64_t{1}),
                                                           ScalarValue(int64_t{5})};
                   }});
  cases.push_back({"pad_cat",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     TensorView* y = input(f, {-1, -1});
                     f.addOutput(pad(x, {int64_t{1}, int64_t{2}}));
                     f.addOutput(pad(x, {int64_t{-1}, int64_t{0}, int64_t{2}, int64_t{1}}, 1.5));
                     f.addOutput(cat({x, y}, 0));
                     f.addOutput(cat({x, cast(y, DataType::Float64)}, 1));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {3, 4}),
                                                           r.uniform(DataType::Float32, {3, 4})};
                   }});
  cases.push_back({"indexing",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     TensorView* index = input(f, {-1}, DataType::Int64);
                     TensorView* gather_index = input(f, {-1, -1}, DataType::Int64);
                     f.addOutput(select(x, 1, int64_t{-1}));
                     f.addOutput(index_select(x, 0, index));
                     f.addOutput(gather(x, 1, gather_index));
                     f.addOutput(take(x, 1, gather_index));
                     f.addOutput(embedding_fwd(gather_index, x, {.padding_idx = int64_t{0}}));
                     f.addOutput(scatter(x, 1, gather_index, x));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{
                         r.uniform(DataType::Float32, {4, 5}),
                         r.uniform(DataType::Int64, {3}, 0, 3),
                         r.uniform(DataType::Int64, {4, 2}, 0, 3)};
                   }});
  cases.push_back({"factories",
                   [](Fusion& f) {
                     TensorView* x = input(f, {-1, -1});
                     Scalar* n = makeInputScalar(f, DataType::Int64);
                     f.addOutput(add(x, full(f, {x->axis(0)->extent(), x->axis(1)->extent()}, 0.5,
                                             DataType::Float32)));
                     f.addOutput(zeros(f, {int64_t{2}, int64_t{3}}, DataType::Int32));
                     f.addOutput(iota(f, int64_t{5}, int64_t{2}, int64_t{3}));
                     f.addOutput(arange(f, int64_t{1}, n, int64_t{2}));
                     f.addOutput(arange(f, 0.0, 1.0, 0.25, DataType::Float32));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 3}),
                                                           ScalarValue(int64_t{9})};
                   }});
  cases.push_back(
      {"random_and_float8",
       [](Fusion& f) {
         TensorView* x = input(f, {-1, -1});
         Scalar* seed = makeInputScalar(f, DataType::Int64);
         Scalar* offset = makeInputScalar(f, DataType::Int64);
         const std::vector<Operand> shape = {x->axis(0)->extent(), x->axis(1)->extent()};
         f.addOutput(add(x, uniform(f, shape, -1.0, 2.0, DataType::Float32, seed, offset)));
         f.addOutput(normal(f, shape, 0.5, 3.0, DataType::Float64, seed, 17));
         f.addOutput(uniform(f, {int64_t{4}}, 0, 1, DataType::BFloat16));
         // float8 dtypes are saved by name, like every dtype.
         TensorView* e4 = cast(x, DataType::Float8_e4m3fn);
         f.addOutput(e4);
         f.addOutput(cast(add(e4, cast(x, DataType::Float8_e5m2)), DataType::Float32));
       },
       [](RandomTensors& r) {
         return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {2, 3}),
                                               ScalarValue(int64_t{123}),
                                               ScalarValue(int64_t{1} << 36)};
       }});
  cases.push_back({"contractions",
                   [](Fusion& f) {
                     TensorView* a = input(f, {-1, -1});
                     TensorView* b = input(f, {-1, -1});
                     TensorView* bias = input(f, {-1});
                     f.addOutput(matmul(a, b));
                     f.addOutput(linear(a, permute(b, {1, 0}), bias));
                     f.addOutput(linear(a, permute(b, {1, 0})));
                   },
                   [](RandomTensors& r) {
                     return std::vector<EvaluatorArgument>{r.uniform(DataType::Float32, {3, 4}),
                                                           r.uniform(DataType::Float32, {4, 5}),
                                                           r.uniform(DataType::Float32, {5})};
                   }});
  cases.push_back({"layout_and_scalar_chain",
                   [](Fusion& f) {
                     TensorView* x = makeInputTensor(f, {.dtype = DataType::Float32,
                                                         .sizes = {-1, 1, -1},
                                                         .contiguity = {false, std::nullopt, true},
                                                         .allocation_order = {2, 1, 0}});
                     Scalar* s = makeInputScalar(f, DataType::Float64);
                     f.addOutput(mul(x, sqrt(add(s, 1.0))));
                   },
                   [](RandomTensors& r) {
                     HostTensor x = test::withAllocationOrder(
                         r.uniform(DataType::Float32, {3, 1, 4}), {2, 1, 0});
                     return std::vector<EvaluatorArgument>{x, ScalarValue(2.0)};
                   }});
  return cases;
}

// Bitwise equality of every element (nan == nan): the same fusion must compute the same bits.
::testing::AssertionResult identicalTensors(const HostTensor& a, const HostTensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes())
    return ::testing::AssertionFailure() << a.describe() << " vs " << b.describe();
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (!identical(a.atFlat(i), b.atFlat(i)))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << toString(a.atFlat(i)) << " vs " << toString(b.atFlat(i));
  }
  return ::testing::AssertionSuccess();
}

void expectSameResults(const Fusion& original, const Fusion& decoded,
                       const std::vector<EvaluatorArgument>& arguments) {
  const std::vector<EvaluatorArgument> expected = evaluateFusion(original, arguments);
  const std::vector<EvaluatorArgument> actual = evaluateFusion(decoded, arguments);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    ASSERT_EQ(expected[i].index(), actual[i].index());
    if (const auto* tensor = std::get_if<HostTensor>(&expected[i])) {
      EXPECT_TRUE(identicalTensors(*tensor, std::get<HostTensor>(actual[i])));
    } else {
      EXPECT_TRUE(identical(std::get<ScalarValue>(expected[i]), std::get<ScalarValue>(actual[i])));
    }
  }
}

class FusionDefinitionOpTest : public ::testing::TestWithParam<size_t> {};

TEST_P(FusionDefinitionOpTest, RoundTripKeepsDefinitionAndResults) {
  const Case c = opCases()[GetParam()];
  SCOPED_TRACE(c.name);
  Fusion fusion;
  c.body(fusion);
  const std::vector<uint8_t> bytes = encodeFusionDefinition(fusion);
  const std::unique_ptr<Fusion> decoded = decodeFusionDefinition(bytes, c.name);
  EXPECT_EQ(canonicalForm(*decoded), canonicalForm(fusion));
  // Encoding the decoded fusion gives the same bytes: the format is canonical.
  EXPECT_EQ(encodeFusionDefinition(*decoded), bytes);
  RandomTensors random(11);
  expectSameResults(fusion, *decoded, c.inputs(random));
}

INSTANTIATE_TEST_SUITE_P(EveryOp, FusionDefinitionOpTest,
                         ::testing::Range(size_t{0}, opCases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return opCases()[info.param].name;
                         });

// Every op kind a user can build appears in the cases above. Split and Merge come only from
// scheduling.
TEST(FusionDefinition, CasesCoverEveryBuildableOp) {
  std::vector<bool> seen(kNumOpKinds, false);
  for (const Case& c : opCases()) {
    Fusion fusion;
    c.body(fusion);
    for (const Expr* expr : fusion.exprs()) seen[static_cast<size_t>(expr->op())] = true;
  }
  for (int op = 0; op < kNumOpKinds; ++op) {
    const auto kind = static_cast<OpKind>(op);
    if (kind == OpKind::Split || kind == OpKind::Merge) continue;
    EXPECT_TRUE(seen[static_cast<size_t>(op)]) << "no case has op " << kind;
  }
}

TEST(FusionDefinition, NormalizationsRoundTrip) {
  for (test::Normalization kind : test::allNormalizations()) {
    for (DataType dtype : {DataType::Float32, DataType::BFloat16}) {
      SCOPED_TRACE(test::toString(kind) + " " + std::string(toString(dtype)));
      const std::unique_ptr<Fusion> fusion = test::makeNormalization(kind, dtype);
      const std::unique_ptr<Fusion> decoded =
          decodeFusionDefinition(encodeFusionDefinition(*fusion), test::toString(kind));
      EXPECT_EQ(canonicalForm(*decoded), canonicalForm(*fusion));
      const std::vector<HostTensor> inputs = test::normalizationArguments(kind, dtype, 3, 40, 5);
      expectSameResults(*fusion, *decoded,
                        std::vector<EvaluatorArgument>(inputs.begin(), inputs.end()));
    }
  }
}

class FusionDefinitionFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braze-fusion-definition-" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::unique_ptr<Fusion> smallFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = input(*fusion, {-1, -1});
  TensorView* w = input(*fusion, {-1});
  fusion->addOutput(sum(mul(x, w), {1}));
  return fusion;
}

TEST_F(FusionDefinitionFileTest, SaveThenLoad) {
  const std::unique_ptr<Fusion> fusion = smallFusion();
  const fs::path path = dir_ / "nested" / "small.bzf";
  saveFusionDefinition(*fusion, path);
  EXPECT_EQ(canonicalForm(*loadFusionDefinition(path)), canonicalForm(*fusion));
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(path.parent_path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(FusionDefinitionFileTest, MissingFileAndDirectoryAreErrors) {
  EXPECT_TRUE(throwsError([&] { loadFusionDefinition(dir_ / "absent.bzf"); },
                          {"absent.bzf", "cannot read"}));
  fs::create_directories(dir_ / "dir.bzf");
  EXPECT_TRUE(throwsError([&] { loadFusionDefinition(dir_ / "dir.bzf"); },
                          {"dir.bzf", "not a regular file"}));
}

TEST(FusionDefinition, EmptyAndForeignBytesAreErrors) {
  EXPECT_TRUE(throwsError([] { decodeFusionDefinition({}, "empty.bzf"); }, {"empty.bzf", "empty"}));
  std::vector<uint8_t> bytes = encodeFusionDefinition(*smallFusion());
  bytes[4] = 'X';  // the identifier sits at bytes 4..7
  EXPECT_TRUE(
      throwsError([&] { decodeFusionDefinition(bytes, "foreign.bzf"); }, {"foreign.bzf", "BRZF"}));
}

TEST(FusionDefinition, EveryTruncationIsAnError) {
  const std::vector<uint8_t> bytes = encodeFusionDefinition(*smallFusion());
  for (size_t size = 0; size < bytes.size(); ++size) {
    SCOPED_TRACE("truncated to " + std::to_string(size) + " bytes");
    EXPECT_TRUE(throwsError(
        [&] { decodeFusionDefinition(std::span(bytes.data(), size), "cut.bzf"); }, {"cut.bzf"}));
  }
}

// A flipped bit either leaves the definition intact (padding, the writer's version) or is an
// Error: never a crash, never a different fusion.
TEST(FusionDefinition, BitFlipsNeverGiveAnotherFusion) {
  for (const Case& c : opCases()) {
    if (c.name != "slice" && c.name != "normalized_slice" && c.name != "reductions") continue;
    Fusion fusion;
    c.body(fusion);
    const std::string expected = canonicalForm(fusion);
    const std::vector<uint8_t> bytes = encodeFusionDefinition(fusion);
    std::mt19937_64 engine(42);
    int errors = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<uint8_t> damaged = bytes;
      const size_t bit = engine() % (damaged.size() * 8);
      damaged[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      try {
        const std::unique_ptr<Fusion> decoded = decodeFusionDefinition(damaged, "flipped.bzf");
        EXPECT_EQ(canonicalForm(*decoded), expected) << "bit " << bit;
      } catch (const Error& error) {
        ++errors;
        EXPECT_NE(std::string(error.what()).find("flipped.bzf"), std::string::npos);
      }
    }
    EXPECT_GT(errors, 1000) << c.name;
  }
}

// Definitions written by hand, as a hostile file could hold them.
struct Crafted {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<flatbuffers::Offset<fb::Expr>> exprs;

  void expr(const std::string& op, const std::vector<int64_t>& values,
            const std::vector<std::string>& dtypes = {"float32"}) {
    std::vector<flatbuffers::Offset<fb::Ref>> refs;
    for (int64_t value : values) refs.push_back(fb::CreateRef(builder, value));
    std::vector<flatbuffers::Offset<flatbuffers::String>> names;
    for (const std::string& dtype : dtypes) names.push_back(builder.CreateString(dtype));
    exprs.push_back(fb::CreateExpr(builder, builder.CreateString(op), builder.CreateVector(refs), 0,
                                   builder.CreateVector(names)));
  }

  // One input, float32 [-1], then the exprs; outputs the last value.
  std::vector<uint8_t> finish(int64_t output, uint32_t version = 1,
                              const std::string& sha = std::string(64, '0')) {
    const std::vector<int64_t> sizes{-1};
    const std::vector<fb::Contiguity> contiguity{fb::Contiguity::True};
    const std::vector<int64_t> order{0};
    const auto tensor =
        fb::CreateTensorInput(builder, builder.CreateString("float32"), builder.CreateVector(sizes),
                              builder.CreateVector(contiguity), builder.CreateVector(order));
    const std::vector<flatbuffers::Offset<fb::Input>> inputs{fb::CreateInput(builder, tensor)};
    const std::vector<int64_t> outputs{output};
    const auto root = fb::CreateFusionDefinition(
        builder, version, builder.CreateString("test"), builder.CreateVector(inputs),
        builder.CreateVector(exprs), builder.CreateVector(outputs), builder.CreateString(sha));
    fb::FinishFusionDefinitionBuffer(builder, root);
    return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
  }
};

TEST(FusionDefinition, ReferenceToALaterValueIsAnError) {
  Crafted crafted;
  crafted.expr("neg", {0});
  crafted.expr("add", {0, 7});  // values: 0 input, 1 its extent, 2 neg's output
  EXPECT_TRUE(
      throwsError([&] { decodeFusionDefinition(crafted.finish(2), "later.bzf"); },
                  {"later.bzf", "expr 1 of 2 (add)", "refers to value 7", "only 3 values exist"}));
}

TEST(FusionDefinition, UnknownOpIsAnError) {
  Crafted crafted;
  crafted.expr("frobnicate", {0});
  EXPECT_TRUE(throwsError([&] { decodeFusionDefinition(crafted.finish(2), "unknown.bzf"); },
                          {"unknown.bzf", "expr 0 of 1", "unknown op 'frobnicate'"}));
}

TEST(FusionDefinition, OtherSchemaVersionIsAnError) {
  Crafted crafted;
  crafted.expr("neg", {0});
  EXPECT_TRUE(throwsError([&] { decodeFusionDefinition(crafted.finish(2, 7), "v7.bzf"); },
                          {"v7.bzf", "schema version 7", "reads version 1"}));
}

TEST(FusionDefinition, BuilderRefusalNamesTheExpr) {
  Crafted crafted;
  crafted.expr("neg", {0});
  crafted.expr("matmul", {0, 1});  // value 1 is a scalar extent, not a tensor
  EXPECT_TRUE(throwsError([&] { decodeFusionDefinition(crafted.finish(2), "bad.bzf"); },
                          {"bad.bzf", "expr 1 of 2 (matmul)", "argument 1 must be a tensor"}));
}

TEST(FusionDefinition, ReplayThatGivesAnotherFusionIsAnError) {
  Crafted crafted;
  crafted.expr("neg", {0});
  EXPECT_TRUE(throwsError([&] { decodeFusionDefinition(crafted.finish(2), "sha.bzf"); },
                          {"sha.bzf", "not the one that was saved"}));
}

// A definition is the program, not its schedule: a copy made by scheduling (cacheBefore) saves
// as the user op set, and the loaded fusion computes the same.
TEST(FusionDefinition, AScheduledFusionSavesAsItsProgram) {
  Fusion fusion;
  TensorView* x = input(fusion, {-1});
  TensorView* y = exp(x);
  fusion.addOutput(y);
  y->cacheBefore();
  const std::unique_ptr<Fusion> decoded =
      decodeFusionDefinition(encodeFusionDefinition(fusion), "scheduled.bzf");
  EXPECT_EQ(canonicalForm(*decoded), canonicalForm(fusion));
  RandomTensors random(3);
  expectSameResults(fusion, *decoded, {random.uniform(DataType::Float32, {17})});
}

// Stream axes are part of the definition: they round-trip with their tensors.
TEST(FusionDefinition, StreamAxesRoundTrip) {
  Fusion fusion;
  TensorView* x = input(fusion, {-1, -1});
  TensorView* y = exp(x);
  TensorView* z = sum(y, {1});
  fusion.addOutput(z);
  y->split(0, 4, /*inner_split=*/false);
  y->parallelize(0, ParallelType::Stream);
  z->split(0, 128);
  z->parallelize(0, ParallelType::Stream);
  takeStreamAxes(fusion);
  const std::unique_ptr<Fusion> decoded =
      decodeFusionDefinition(encodeFusionDefinition(fusion), "streamed.bzf");
  EXPECT_EQ(canonicalForm(*decoded), canonicalForm(fusion));
  const TensorView* out = decoded->outputs()[0]->as<TensorView>();
  ASSERT_TRUE(out->streamAxis().has_value());
  EXPECT_EQ(*out->streamAxis(), (StreamAxis{0, false, 128}));
}

// Saved definitions do not hold shardings yet: saving one is refused rather than losing them.
TEST(FusionDefinition, AShardedDefinitionIsNotSavedWithoutItsShardings) {
  Fusion fusion;
  TensorView* x = input(fusion, {-1, -1});
  TensorView* y = exp(x);
  fusion.addOutput(y);
  y->setDeviceMesh(DeviceMesh::ofSize(2));
  y->split(0, 2, /*inner_split=*/false);
  y->parallelize(0, ParallelType::DIDx);
  EXPECT_TRUE(test::throwsError([&] { encodeFusionDefinition(fusion); },
                                {"T1 is placed on a device mesh", "cannot be saved"}));
  takeShardings(fusion);
  EXPECT_TRUE(test::throwsError([&] { encodeFusionDefinition(fusion); },
                                {"T1 is placed on a device mesh (mesh{0, 1} axis 0 over DIDx)"}));
}

}  // namespace
}  // namespace braze::serde
