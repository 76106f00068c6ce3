// matmul and linear through the reference evaluator, against triple loops: 1-D and 2-D
// operands, batch dims that broadcast, reduced-precision inputs, and linear with and without
// bias.

#include <algorithm>
#include <functional>

#include <gtest/gtest.h>

#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "support/multi_index.h"
#include "support/random_tensor.h"
#include "support/tensor_compare.h"
#include "support/tensor_values.h"

namespace braze {
namespace {

using test::expectClose;
using test::RandomTensors;
using test::valuesOf;

using Sizes = std::vector<int64_t>;

/// torch.matmul on row-major values, written out: 1-D operands are promoted by a unit dim
/// that is dropped afterwards, batch dims broadcast.
struct MatmulReference {
  std::vector<double> values;
  Sizes sizes;
};

MatmulReference matmulReference(const std::vector<double>& a, Sizes sa,
                                const std::vector<double>& b, Sizes sb) {
  const bool a_vector = sa.size() == 1;
  const bool b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), 1);
  if (b_vector) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2];
  const int64_t k = sa.back();
  const int64_t n = sb.back();
  const Sizes batch_a(sa.begin(), sa.end() - 2);
  const Sizes batch_b(sb.begin(), sb.end() - 2);
  // Broadcast batch dims from the right.
  const size_t batch_rank = std::max(batch_a.size(), batch_b.size());
  Sizes batch(batch_rank, 1);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t da = i < batch_a.size() ? batch_a[batch_a.size() - 1 - i] : 1;
    const int64_t db = i < batch_b.size() ? batch_b[batch_b.size() - 1 - i] : 1;
    batch[batch_rank - 1 - i] = std::max(da, db);
  }
  auto batchIndexInto = [&](const Sizes& index, const Sizes& own) {
    Sizes result(own.size());
    for (size_t i = 0; i < own.size(); ++i) {
      result[i] = own[i] == 1 ? 0 : index[batch_rank - own.size() + i];
    }
    return result;
  };
  MatmulReference out;
  for (int64_t bflat = 0; bflat < test::numelOf(batch); ++bflat) {
    const Sizes bi = test::unravelIndex(bflat, batch);
    const int64_t a_base = test::ravelIndex(batchIndexInto(bi, batch_a), batch_a) * m * k;
    const int64_t b_base = test::ravelIndex(batchIndexInto(bi, batch_b), batch_b) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double total = 0;
        for (int64_t p = 0; p < k; ++p) total += a[a_base + i * k + p] * b[b_base + p * n + j];
        out.values.push_back(total);
      }
    }
  }
  out.sizes = batch;
  if (!a_vector) out.sizes.push_back(m);
  if (!b_vector) out.sizes.push_back(n);
  return out;
}

struct MatmulCase {
  const char* name;
  Sizes a;
  Sizes b;
};

std::ostream& operator<<(std::ostream& os, const MatmulCase& c) {
  return os << c.name;
}

const MatmulCase kMatmulCases[] = {
    {"dot", {7}, {7}},
    {"matrix_vector", {4, 7}, {7}},
    {"vector_matrix", {7}, {7, 5}},
    {"matrix_matrix", {4, 7}, {7, 5}},
    {"inner_one", {3, 1}, {1, 6}},
    {"batched", {2, 4, 3}, {2, 3, 5}},
    {"batch_broadcast", {2, 1, 3, 4}, {5, 4, 6}},
    {"batched_times_matrix", {3, 2, 5}, {5, 4}},
    {"vector_times_batched", {5}, {3, 5, 2}},
    {"batched_times_vector", {3, 2, 5}, {5}},
};

class MatmulTest : public ::testing::TestWithParam<std::tuple<MatmulCase, DataType>> {};

/// Input sizes for a fusion: batch dims of size 1 are declared as broadcasts (a symbolic dim
/// never broadcasts, whatever its run-time size); every other dim is symbolic.
Sizes specSizes(const Sizes& sizes) {
  Sizes spec(sizes.size(), -1);
  for (size_t d = 0; d + 2 < sizes.size(); ++d) {
    if (sizes[d] == 1) spec[d] = 1;
  }
  return spec;
}

TEST_P(MatmulTest, MatchesLoops) {
  const auto& [c, dtype] = GetParam();
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = dtype, .sizes = specSizes(c.a)});
  TensorView* b = makeInputTensor(fusion, {.dtype = dtype, .sizes = specSizes(c.b)});
  fusion.addOutput(matmul(a, b));
  RandomTensors random(91);
  const HostTensor ta = random.uniform(dtype, c.a, -1, 1);
  const HostTensor tb = random.uniform(dtype, c.b, -1, 1);
  const MatmulReference expected = matmulReference(valuesOf(ta), c.a, valuesOf(tb), c.b);
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0], {dtype, expected.sizes, expected.values});
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatmulTest,
                         ::testing::Combine(::testing::ValuesIn(kMatmulCases),
                                            ::testing::Values(DataType::Float32, DataType::Float64,
                                                              DataType::Float16,
                                                              DataType::BFloat16)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::string(toString(std::get<1>(info.param)));
                         });

TEST(EvaluateContraction, MatmulWithFixedBroadcastBatchDim) {
  // A fixed size-1 batch dim is a Broadcast dim and must broadcast against the other operand.
  Fusion fusion;
  TensorView* a = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {1, 3, 4}});
  TensorView* b = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {2, 4, 5}});
  fusion.addOutput(matmul(a, b));
  RandomTensors random(92);
  const HostTensor ta = random.uniform(DataType::Float32, {1, 3, 4});
  const HostTensor tb = random.uniform(DataType::Float32, {2, 4, 5});
  const MatmulReference expected =
      matmulReference(valuesOf(ta), {1, 3, 4}, valuesOf(tb), {2, 4, 5});
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0],
              {DataType::Float32, expected.sizes, expected.values});
}

TEST(EvaluateContraction, LongFloat16DotAccumulatesWide) {
  // 2048 products of about 0.5: a float16 accumulator would stall once its spacing exceeds
  // the addends.
  Fusion fusion;
  TensorView* a = makeSymbolicTensor(fusion, 1, DataType::Float16);
  TensorView* b = makeSymbolicTensor(fusion, 1, DataType::Float16);
  fusion.addOutput(matmul(a, b));
  RandomTensors random(93);
  const HostTensor ta = random.uniform(DataType::Float16, {2048}, 0.6, 0.8);
  const HostTensor tb = random.uniform(DataType::Float16, {2048}, 0.6, 0.8);
  const MatmulReference expected = matmulReference(valuesOf(ta), {2048}, valuesOf(tb), {2048});
  expectClose(evaluateFusionTensors(fusion, {ta, tb})[0], {DataType::Float16, {}, expected.values});
}

/// Expected linear: x [..., K] times weight [N, K] transposed, plus bias [N].
std::vector<double> linearReference(const std::vector<double>& x, int64_t rows,
                                    const std::vector<double>& w, int64_t n, int64_t k,
                                    const std::function<double(int64_t)>& bias) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double total = bias(j);
      for (int64_t p = 0; p < k; ++p) total += x[r * k + p] * w[j * k + p];
      out.push_back(total);
    }
  }
  return out;
}

TEST(EvaluateContraction, LinearWithAndWithoutBias) {
  for (DataType dtype : {DataType::Float32, DataType::BFloat16, DataType::Float64}) {
    SCOPED_TRACE(toString(dtype));
    Fusion fusion;
    TensorView* x = makeSymbolicTensor(fusion, 3, dtype);
    TensorView* w = makeSymbolicTensor(fusion, 2, dtype);
    TensorView* bias = makeSymbolicTensor(fusion, 1, dtype);
    fusion.addOutput(linear(x, w));
    fusion.addOutput(linear(x, w, bias));
    RandomTensors random(94);
    const HostTensor tx = random.uniform(dtype, {2, 3, 8}, -1, 1);
    const HostTensor tw = random.uniform(dtype, {5, 8}, -1, 1);
    const HostTensor tbias = random.uniform(dtype, {5}, -1, 1);
    const std::vector<double> vb = valuesOf(tbias);
    const std::vector<HostTensor> out = evaluateFusionTensors(fusion, {tx, tw, tbias});
    ASSERT_EQ(out.size(), 2u);
    expectClose(
        out[0],
        {dtype, {2, 3, 5}, linearReference(valuesOf(tx), 6, valuesOf(tw), 5, 8, [](int64_t) {
           return 0.0;
         })});
    expectClose(
        out[1],
        {dtype, {2, 3, 5}, linearReference(valuesOf(tx), 6, valuesOf(tw), 5, 8, [&](int64_t j) {
           return vb[j];
         })});
  }
}

TEST(EvaluateContraction, LinearWithVectorWeightAndScalarBias) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 2);
  TensorView* w = makeSymbolicTensor(fusion, 1);
  TensorView* bias = makeInputTensor(fusion, {.dtype = DataType::Float32, .sizes = {}});
  fusion.addOutput(linear(x, w, bias));
  RandomTensors random(95);
  const HostTensor tx = random.uniform(DataType::Float32, {4, 6});
  const HostTensor tw = random.uniform(DataType::Float32, {6});
  const HostTensor tbias = test::scalarTensor(DataType::Float32, 0.75);
  // weight [K] gives one value per row: result [4].
  expectClose(evaluateFusionTensors(fusion, {tx, tw, tbias})[0],
              {DataType::Float32,
               {4},
               linearReference(valuesOf(tx), 4, valuesOf(tw), 1, 6, [](int64_t) { return 0.75; })});
}

TEST(EvaluateContraction, LinearOfOneDimensionalInput) {
  Fusion fusion;
  TensorView* x = makeSymbolicTensor(fusion, 1);
  TensorView* w = makeSymbolicTensor(fusion, 2);
  TensorView* bias = makeSymbolicTensor(fusion, 1);
  fusion.addOutput(linear(x, w, bias));
  RandomTensors random(96);
  const HostTensor tx = random.uniform(DataType::Float32, {5});
  const HostTensor tw = random.uniform(DataType::Float32, {3, 5});
  const HostTensor tbias = random.uniform(DataType::Float32, {3});
  const std::vector<double> vb = valuesOf(tbias);
  expectClose(
      evaluateFusionTensors(fusion, {tx, tw, tbias})[0],
      {DataType::Float32, {3}, linearReference(valuesOf(tx), 1, valuesOf(tw), 3, 5, [&](int64_t j) {
         return vb[j];
       })});
}

}  // namespace
}  // namespace braze
