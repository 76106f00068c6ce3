// Matmul and Linear in double with plain loops. For every output element the products are
// summed in order of k, so the oracle does not depend on blocking or threading.

#include <numeric>

#include "eval/eval_tensor.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

namespace {

const TensorView& tensorInput(const Expr& expr, size_t i) {
  return *expr.input(i)->as<TensorView>();
}

// out[i, j] += sum over k of a[i, k] * b[k, j], row-major, with explicit strides for b so that
// Linear can read its weight transposed.
void multiplyAccumulate(const double* a, const double* b, double* out, int64_t m, int64_t n,
                        int64_t k, int64_t b_stride_k, int64_t b_stride_n) {
  for (int64_t i = 0; i < m; ++i) {
    double* row = out + i * n;
    for (int64_t p = 0; p < k; ++p) {
      const double scale = a[i * k + p];
      const double* b_row = b + p * b_stride_k;
      for (int64_t j = 0; j < n; ++j) row[j] += scale * b_row[j * b_stride_n];
    }
  }
}

EvalTensor evaluateMatmul(const Expr& expr, EvalContext& context) {
  EvalTensor a = materialize(context.tensor(expr.input(0)), Held::Float);
  EvalTensor b = materialize(context.tensor(expr.input(1)), Held::Float);
  BRAZE_INTERNAL_CHECK(a.rank() >= 1 && b.rank() >= 1)
      << exprLabel(expr) << ": matmul operands must have rank 1 or more";
  // torch.matmul: a 1-D operand gains a unit dim (a: in front, b: behind) removed after.
  const bool a_vector = a.rank() == 1;
  const bool b_vector = b.rank() == 1;
  if (a_vector) a.sizes.insert(a.sizes.begin(), 1);
  if (b_vector) b.sizes.push_back(1);

  const int64_t m = a.sizes[a.sizes.size() - 2];
  const int64_t k = a.sizes.back();
  const int64_t n = b.sizes.back();
  BRAZE_USER_CHECK(b.sizes[b.sizes.size() - 2] == k)
      << "matmul: the inner dims differ: " << tensorLabel(tensorInput(expr, 0)) << " has " << k
      << " columns but " << tensorLabel(tensorInput(expr, 1)) << " has "
      << b.sizes[b.sizes.size() - 2] << " rows, in " << exprLabel(expr);

  // Batch dims broadcast from the right; size-1 dims repeat.
  const size_t a_batch = a.sizes.size() - 2;
  const size_t b_batch = b.sizes.size() - 2;
  const size_t batch_rank = std::max(a_batch, b_batch);
  const std::vector<int64_t> a_all = contiguousStrides(a.sizes);
  const std::vector<int64_t> b_all = contiguousStrides(b.sizes);
  StridedOperands<3> walk;
  walk.sizes.assign(batch_rank, 1);
  walk.strides = {std::vector<int64_t>(batch_rank, 0), std::vector<int64_t>(batch_rank, 0),
                  std::vector<int64_t>(batch_rank, 0)};
  for (size_t d = 0; d < batch_rank; ++d) {
    const bool in_a = d + a_batch >= batch_rank;
    const bool in_b = d + b_batch >= batch_rank;
    const size_t da = d + a_batch - batch_rank;
    const size_t db = d + b_batch - batch_rank;
    const int64_t size_a = in_a ? a.sizes[da] : 1;
    const int64_t size_b = in_b ? b.sizes[db] : 1;
    BRAZE_USER_CHECK(size_a == size_b || size_a == 1 || size_b == 1)
        << "matmul: batch dims do not broadcast: " << tensorLabel(tensorInput(expr, 0)) << " has "
        << size_a << " and " << tensorLabel(tensorInput(expr, 1)) << " has " << size_b
        << " at batch dim " << d << ", in " << exprLabel(expr);
    walk.sizes[d] = std::max(size_a, size_b);
    if (size_a == 0 || size_b == 0) walk.sizes[d] = 0;
    if (in_a && size_a != 1) walk.strides[0][d] = a_all[da];
    if (in_b && size_b != 1) walk.strides[1][d] = b_all[db];
  }
  std::vector<int64_t> out_sizes = walk.sizes;
  out_sizes.push_back(m);
  out_sizes.push_back(n);
  walk.strides[2] = contiguousStrides(out_sizes);
  walk.strides[2].resize(batch_rank);

  EvalTensor y = EvalTensor::filled(Held::Float, out_sizes, 0.0);
  const double* a_data = a.data<double>();
  const double* b_data = b.data<double>();
  double* y_data = y.data<double>();
  if (m > 0 && n > 0) {
    walkStrided(walk, [&](const std::array<int64_t, 3>& at) {
      multiplyAccumulate(a_data + at[0], b_data + at[1], y_data + at[2], m, n, k, n, 1);
    });
  }
  // Drop the unit dims added for 1-D operands (the data stays row-major).
  if (b_vector) out_sizes.pop_back();
  if (a_vector) out_sizes.erase(out_sizes.end() - (b_vector ? 1 : 2));
  y.sizes = out_sizes;
  y.strides = contiguousStrides(out_sizes);
  return y;
}

EvalTensor evaluateLinear(const Expr& expr, EvalContext& context) {
  const EvalTensor x = materialize(context.tensor(expr.input(0)), Held::Float);
  const EvalTensor weight = materialize(context.tensor(expr.input(1)), Held::Float);
  BRAZE_INTERNAL_CHECK(x.rank() >= 1 && (weight.rank() == 1 || weight.rank() == 2))
      << exprLabel(expr) << ": linear needs x of rank >= 1 and a 1-D or 2-D weight";
  const int64_t k = x.sizes.back();
  const bool vector_weight = weight.rank() == 1;
  const int64_t n = vector_weight ? 1 : weight.sizes[0];
  const int64_t weight_k = weight.sizes.back();
  BRAZE_USER_CHECK(weight_k == k) << "linear: " << tensorLabel(tensorInput(expr, 0)) << " has " << k
                                  << " features in its last dim but the weight "
                                  << tensorLabel(tensorInput(expr, 1)) << " has " << weight_k
                                  << ", in " << exprLabel(expr);

  std::vector<int64_t> out_sizes(x.sizes.begin(), x.sizes.end() - 1);
  const int64_t rows =
      std::accumulate(out_sizes.begin(), out_sizes.end(), int64_t{1}, std::multiplies<>());
  if (!vector_weight) out_sizes.push_back(n);
  EvalTensor y = EvalTensor::filled(Held::Float, out_sizes, 0.0);
  // y[r, j] = sum over p of x[r, p] * weight[j, p]: weight read transposed.
  if (rows > 0 && n > 0) {
    multiplyAccumulate(x.data<double>(), weight.data<double>(), y.data<double>(), rows, n, k, 1, k);
  }

  if (expr.inputs().size() > 2) {
    const EvalTensor& bias = context.tensor(expr.input(2));
    // The bias broadcasts against the output from the right, as in y + bias.
    BRAZE_USER_CHECK(bias.rank() <= y.rank())
        << "linear: the bias " << tensorLabel(tensorInput(expr, 2)) << " of shape "
        << formatSizes(bias.sizes) << " does not broadcast to the output shape "
        << formatSizes(y.sizes) << ", in " << exprLabel(expr);
    StridedOperands<2> walk;
    walk.sizes = y.sizes;
    walk.strides = {std::vector<int64_t>(y.sizes.size(), 0), y.strides};
    walk.offsets = {0, 0};
    const EvalTensor converted = convertedTo(bias, Held::Float);
    walk.offsets[0] = converted.offset;
    const size_t lead = y.sizes.size() - bias.sizes.size();
    for (size_t d = 0; d < bias.sizes.size(); ++d) {
      const int64_t size = bias.sizes[d];
      BRAZE_USER_CHECK(size == 1 || size == y.sizes[lead + d])
          << "linear: the bias " << tensorLabel(tensorInput(expr, 2)) << " of shape "
          << formatSizes(bias.sizes) << " does not broadcast to the output shape "
          << formatSizes(y.sizes) << ", in " << exprLabel(expr);
      if (size != 1) walk.strides[0][lead + d] = converted.strides[d];
    }
    const double* b = converted.data<double>();
    double* out = y.data<double>();
    walkStrided(walk, [&](const std::array<int64_t, 2>& at) { out[at[1]] += b[at[0]]; });
  }
  return y;
}

}  // namespace

std::vector<EvalTensor> evaluateContractionExpr(const Expr& expr, EvalContext& context) {
  switch (expr.op()) {
    case OpKind::Matmul:
      return {evaluateMatmul(expr, context)};
    case OpKind::Linear:
      return {evaluateLinear(expr, context)};
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << exprLabel(expr) << " is not a contraction op";
}

}  // namespace braze::eval_detail
