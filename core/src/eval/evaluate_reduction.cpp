// Sum, Prod, Max, Min and Welford over the "axes" attribute. Reduced elements are visited in
// row-major order, accumulating in the output's category (double, int64 wrapping, bool), so
// the result is a deterministic sequential reduction.

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "eval/accumulation.h"
#include "eval/eval_tensor.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

namespace {

// The input's dims split into kept ones (output order) and reduced ones, as a walk whose
// reduced dims are innermost: operand 0 is the input, operand 1 the contiguous output (stride
// 0 along reduced dims).
struct ReductionWalk {
  std::vector<int64_t> out_sizes;
  int64_t reduced_count = 1;
  StridedOperands<2> walk;
};

ReductionWalk planReduction(const Expr& expr, const EvalTensor& x) {
  const auto& axes = expr.attribute<std::vector<int64_t>>("axes");
  std::vector<bool> reduced(x.sizes.size(), false);
  for (int64_t axis : axes) {
    BRAZE_INTERNAL_CHECK(axis >= 0 && axis < x.rank())
        << exprLabel(expr) << ": axis " << axis << " is out of range for rank " << x.rank();
    reduced[static_cast<size_t>(axis)] = true;
  }
  ReductionWalk plan;
  std::vector<int64_t> kept_strides;
  std::vector<int64_t> reduced_sizes;
  std::vector<int64_t> reduced_strides;
  for (size_t d = 0; d < x.sizes.size(); ++d) {
    if (reduced[d]) {
      reduced_sizes.push_back(x.sizes[d]);
      reduced_strides.push_back(x.strides[d]);
      plan.reduced_count *= x.sizes[d];
    } else {
      plan.out_sizes.push_back(x.sizes[d]);
      kept_strides.push_back(x.strides[d]);
    }
  }
  plan.walk.sizes = plan.out_sizes;
  plan.walk.sizes.insert(plan.walk.sizes.end(), reduced_sizes.begin(), reduced_sizes.end());
  plan.walk.strides[0] = kept_strides;
  plan.walk.strides[0].insert(plan.walk.strides[0].end(), reduced_strides.begin(),
                              reduced_strides.end());
  plan.walk.strides[1] = contiguousStrides(plan.out_sizes);
  plan.walk.strides[1].resize(plan.walk.sizes.size(), 0);
  plan.walk.offsets = {x.offset, 0};
  return plan;
}

// The producer rFactor makes keeps partial results: its root indexes x's dims, its logical
// domain is derived from the root by Split/Merge exprs, and only its Reduction logical dims are
// combined; the others index the partial results. Each element of x is sent to the partial
// result its coordinates land on (extra positions of non-divisible splits keep the identity).
EvalTensor evaluatePartialReduction(const Expr& expr, const TensorView& y, const EvalTensor& x,
                                    EvalContext& context) {
  const std::vector<IterDomain*>& root = y.root();
  BRAZE_INTERNAL_CHECK(root.size() == x.sizes.size())
      << exprLabel(expr) << ": the root of " << y.name() << " has " << root.size()
      << " dims but the input has rank " << x.rank();
  std::vector<const Expr*> transforms;
  std::vector<const Val*> pending(y.logical().begin(), y.logical().end());
  std::unordered_set<const Val*> seen;
  while (!pending.empty()) {
    const Val* val = pending.back();
    pending.pop_back();
    const Expr* def = val->definition();
    if (!seen.insert(val).second || def == nullptr || val->isA<TensorView>()) continue;
    if (std::find(root.begin(), root.end(), val) != root.end()) continue;
    if (std::find(transforms.begin(), transforms.end(), def) == transforms.end()) {
      transforms.push_back(def);
    }
    for (const Val* input : def->inputs()) {
      if (input->isA<IterDomain>()) pending.push_back(input);
    }
  }
  std::sort(transforms.begin(), transforms.end(),
            [](const Expr* a, const Expr* b) { return a->id() < b->id(); });

  std::unordered_map<const Val*, size_t> slot;
  const auto slotOf = [&slot](const Val* id) {
    return slot.emplace(id, slot.size()).first->second;
  };
  const auto extentOf = [&](const Val* id) {
    return toInt64(
        context.scalar(id->as<IterDomain>()->logicalExtent(), "an extent of " + y.name()));
  };
  for (const IterDomain* id : root) slotOf(id);
  struct Step {
    bool split;
    size_t in, other, out0, out1;
    int64_t divisor;  // split: the inner extent; merge: the inner input's extent
  };
  std::vector<Step> steps;
  for (const Expr* transform : transforms) {
    if (transform->op() == OpKind::Split) {
      const size_t in = slotOf(transform->input(0));
      steps.push_back({true, in, 0, slotOf(transform->output(0)), slotOf(transform->output(1)),
                       extentOf(transform->output(1))});
    } else {
      const size_t outer = slotOf(transform->input(0));
      const size_t inner = slotOf(transform->input(1));
      steps.push_back(
          {false, outer, inner, slotOf(transform->output(0)), 0, extentOf(transform->input(1))});
    }
  }
  std::vector<int64_t> out_sizes;
  std::vector<size_t> out_slots;
  for (const IterDomain* id : y.logicalNoReductions()) {
    out_sizes.push_back(extentOf(id));
    out_slots.push_back(slotOf(id));
  }
  const std::vector<int64_t> out_strides = contiguousStrides(out_sizes);

  const DataType out_dtype = y.dtype();
  const OpKind op = expr.op();
  EvalTensor out = EvalTensor::allocate(x.held, out_sizes);
  visitHeld(x.held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    T* result = out.data<T>();
    std::fill_n(result, out.numel(), identityOf<T>(op, out_dtype));
    const T* in = x.data<T>();
    std::vector<int64_t> index(slot.size(), 0);
    std::vector<int64_t> counter(x.sizes.size(), 0);
    if (std::find(x.sizes.begin(), x.sizes.end(), 0) != x.sizes.end()) return;
    while (true) {
      int64_t in_offset = x.offset;
      for (size_t d = 0; d < counter.size(); ++d) {
        index[d] = counter[d];
        in_offset += counter[d] * x.strides[d];
      }
      for (const Step& step : steps) {
        if (step.split) {
          index[step.out0] = index[step.in] / step.divisor;
          index[step.out1] = index[step.in] % step.divisor;
        } else {
          index[step.out0] = index[step.in] * step.divisor + index[step.other];
        }
      }
      int64_t out_offset = 0;
      for (size_t k = 0; k < out_slots.size(); ++k)
        out_offset += index[out_slots[k]] * out_strides[k];
      result[out_offset] = combine<T>(op, result[out_offset], in[in_offset]);
      size_t d = counter.size();
      while (d > 0 && ++counter[d - 1] == x.sizes[d - 1]) counter[--d] = 0;
      if (d == 0) break;
    }
  });
  return out;
}

}  // namespace

std::vector<EvalTensor> evaluateReductionExpr(const Expr& expr, EvalContext& context) {
  const DataType out_dtype = expr.output(0)->dtype();
  const Held held = heldOf(out_dtype);
  // Accumulate in the output's category (sum of bools or ints into int64, ...).
  const EvalTensor x = convertedTo(context.tensor(expr.input(0)), held);
  const auto& y = *expr.output(0)->as<TensorView>();
  if (y.hasRoot()) return {evaluatePartialReduction(expr, y, x, context)};
  const ReductionWalk plan = planReduction(expr, x);
  EvalTensor out = EvalTensor::allocate(held, plan.out_sizes);
  const OpKind op = expr.op();
  visitHeld(held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    T* result = out.data<T>();
    std::fill_n(result, out.numel(), identityOf<T>(op, out_dtype));
    const T* in = x.data<T>();
    walkStrided(plan.walk, [&](const std::array<int64_t, 2>& at) {
      result[at[1]] = combine<T>(op, result[at[1]], in[at[0]]);
    });
  });
  return {std::move(out)};
}

std::vector<EvalTensor> evaluateWelfordExpr(const Expr& expr, EvalContext& context) {
  const EvalTensor x = convertedTo(context.tensor(expr.input(0)), Held::Float);
  const ReductionWalk plan = planReduction(expr, x);
  EvalTensor avg = EvalTensor::allocate(Held::Float, plan.out_sizes);
  EvalTensor m2 = EvalTensor::allocate(Held::Float, plan.out_sizes);
  const int64_t count = plan.reduced_count;
  EvalTensor n = EvalTensor::filled(Held::Int, plan.out_sizes, count);
  const int64_t outputs = avg.numel();
  const double* in = x.data<double>();
  double* mean = avg.data<double>();
  double* squares = m2.data<double>();
  std::fill_n(mean, outputs, 0.0);
  std::fill_n(squares, outputs, 0.0);
  // Two passes (mean, then squared deviations from it) instead of Welford's update: the
  // oracle should be as accurate as double allows, not mimic one accumulation order.
  walkStrided(plan.walk, [&](const std::array<int64_t, 2>& at) { mean[at[1]] += in[at[0]]; });
  for (int64_t i = 0; i < outputs; ++i) {
    // An empty reduction has no mean and no variance: PyTorch gives nan for both, whatever
    // correction is applied to m2 afterwards.
    mean[i] = count == 0 ? NAN : mean[i] / static_cast<double>(count);
    if (count == 0) squares[i] = NAN;
  }
  walkStrided(plan.walk, [&](const std::array<int64_t, 2>& at) {
    const double deviation = in[at[0]] - mean[at[1]];
    squares[at[1]] += deviation * deviation;
  });
  return {std::move(avg), std::move(m2), std::move(n)};
}

}  // namespace braze::eval_detail
