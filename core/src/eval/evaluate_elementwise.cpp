// Elementwise ops (Unary, Cast, Binary and Ternary families) on tensors: operands are aligned
// from the right and broadcast along Broadcast dims; every element goes through
// evaluateElementwise, the one definition of each op's meaning, except for a few float ops
// whose meaning is a single IEEE operation and which run as typed loops.

#include <cmath>

#include "braze/ops/elementwise_semantics.h"
#include "eval/elementwise_attributes.h"
#include "eval/eval_tensor.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

namespace {

// One operand aligned to the output's dims: broadcast dims have stride 0.
struct AlignedOperand {
  EvalTensor value;
  std::vector<int64_t> strides;
};

struct Alignment {
  std::vector<int64_t> sizes;
  std::vector<AlignedOperand> operands;
};

Alignment alignOperands(const Expr& expr, EvalContext& context) {
  const auto& out = *expr.output(0)->as<TensorView>();
  const auto out_rank = static_cast<size_t>(out.rank());
  Alignment alignment;
  alignment.sizes.assign(out_rank, 1);

  // Which operand (and which of its dims) fixed each output size, for error messages.
  struct Source {
    const TensorView* tv = nullptr;
    size_t dim = 0;
  };
  std::vector<Source> sources(out_rank);

  for (size_t k = 0; k < expr.inputs().size(); ++k) {
    const Val* input = expr.input(k);
    AlignedOperand operand;
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr) {
      const std::string what = "operand " + std::to_string(k) + " of " + exprLabel(expr);
      operand.value = EvalTensor::ofScalar(heldOf(input->dtype()), context.scalar(input, what));
      operand.strides.assign(out_rank, 0);
      alignment.operands.push_back(std::move(operand));
      continue;
    }
    operand.value = context.tensor(tv);
    const std::vector<IterDomain*> dims = tv->logicalNoReductions();
    const size_t rank = operand.value.sizes.size();
    BRAZE_INTERNAL_CHECK(rank == dims.size() && rank <= out_rank)
        << exprLabel(expr) << ": operand " << tv->name() << " has rank " << rank
        << " but the output has rank " << out_rank;
    operand.strides.assign(out_rank, 0);
    const size_t lead = out_rank - rank;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t size = operand.value.sizes[d];
      // A Broadcast dim (or one of constant extent 1) repeats along the other operands;
      // every other dim must match them exactly: an Iteration dim that only happens to have
      // size 1 at run time does not broadcast, as in the generated kernels.
      const bool broadcasts =
          dims[d]->isBroadcast() || dims[d]->logicalExtent()->isConstantEqualTo(1);
      if (broadcasts && size == 1) continue;
      operand.strides[lead + d] = operand.value.strides[d];
      Source& source = sources[lead + d];
      if (source.tv == nullptr) {
        source = {tv, d};
        alignment.sizes[lead + d] = size;
        continue;
      }
      BRAZE_USER_CHECK(alignment.sizes[lead + d] == size)
          << expr.op() << ": " << tensorLabel(*source.tv) << " dim " << source.dim << " has size "
          << alignment.sizes[lead + d] << " but " << tensorLabel(*tv) << " dim " << d
          << " has size " << size << ", in " << exprLabel(expr)
          << "; elementwise operands must agree on every dim that is not a broadcast (size-1) "
             "dim";
    }
    alignment.operands.push_back(std::move(operand));
  }
  return alignment;
}

ScalarValue loadHeld(const EvalTensor& tensor, int64_t offset) {
  switch (tensor.held) {
    case Held::Bool:
      return tensor.data<bool>()[offset];
    case Held::Int:
      return tensor.data<int64_t>()[offset];
    case Held::Float:
      break;
  }
  return tensor.data<double>()[offset];
}

template <size_t N>
StridedOperands<N + 1> makeWalk(const Alignment& alignment, const EvalTensor& out) {
  StridedOperands<N + 1> walk;
  walk.sizes = alignment.sizes;
  for (size_t k = 0; k < N; ++k) {
    walk.strides[k] = alignment.operands[k].strides;
    walk.offsets[k] = alignment.operands[k].value.offset;
  }
  walk.strides[N] = out.strides;
  walk.offsets[N] = out.offset;
  return walk;
}

// Typed loops for float ops that are one IEEE operation on doubles, where going through
// ScalarValue per element would only cost time. Returns false when `op` has no such loop.
template <size_t N>
bool tryFloatLoop(OpKind op, DataType out_dtype, const Alignment& alignment, EvalTensor& out) {
  if (out.held != Held::Float) return false;
  for (const AlignedOperand& operand : alignment.operands) {
    if (operand.value.held != Held::Float) return false;
  }
  const StridedOperands<N + 1> walk = makeWalk<N>(alignment, out);
  std::array<const double*, N> in;
  for (size_t k = 0; k < N; ++k) in[k] = alignment.operands[k].value.template data<double>();
  double* result = out.data<double>();
  auto run = [&](auto f) {
    walkStrided(walk, [&](const std::array<int64_t, N + 1>& at) {
      if constexpr (N == 1) {
        result[at[1]] = f(in[0][at[0]], 0.0);
      } else {
        result[at[N]] = f(in[0][at[0]], in[1][at[1]]);
      }
    });
    return true;
  };
  if constexpr (N == 1) {
    switch (op) {
      case OpKind::Neg:
        return run([](double a, double) { return -a; });
      case OpKind::Cast:
        return run([out_dtype](double a, double) { return roundToPrecision(a, out_dtype); });
      default:
        return false;
    }
  } else if constexpr (N == 2) {
    switch (op) {
      case OpKind::Add:
        return run([](double a, double b) { return a + b; });
      case OpKind::Sub:
        return run([](double a, double b) { return a - b; });
      case OpKind::Mul:
        return run([](double a, double b) { return a * b; });
      case OpKind::Div:
      case OpKind::TrueDiv:
        return run([](double a, double b) { return a / b; });
      default:
        return false;
    }
  }
  return false;
}

template <size_t N>
void genericLoop(const Expr& expr, DataType out_dtype, const Alignment& alignment,
                 EvalTensor& out) {
  const StridedOperands<N + 1> walk = makeWalk<N>(alignment, out);
  const OpKind op = expr.op();
  const ElementwiseAttributes attributes = elementwiseAttributesOf(expr);
  std::array<ScalarValue, N> args;
  try {
    visitHeld(out.held, [&](auto tag) {
      using T = typename decltype(tag)::Type;
      T* result = out.data<T>();
      walkStrided(walk, [&](const std::array<int64_t, N + 1>& at) {
        for (size_t k = 0; k < N; ++k) args[k] = loadHeld(alignment.operands[k].value, at[k]);
        const ScalarValue value = evaluateElementwise(op, args, out_dtype, attributes);
        const T* typed = std::get_if<T>(&value);
        result[at[N]] =
            typed != nullptr ? *typed : std::visit([](auto v) { return convertHeld<T>(v); }, value);
      });
    });
  } catch (const Error& error) {
    // Name the tensor op as well as the scalar one (integer division by zero, ...).
    throw Error(std::string(error.what()) + " (in " + exprLabel(expr) + ")");
  }
}

template <size_t N>
void computeInto(const Expr& expr, DataType out_dtype, const Alignment& alignment,
                 EvalTensor& out) {
  if (out.numel() == 0) return;
  if (tryFloatLoop<N>(expr.op(), out_dtype, alignment, out)) return;
  genericLoop<N>(expr, out_dtype, alignment, out);
}

}  // namespace

std::vector<EvalTensor> evaluateElementwiseExpr(const Expr& expr, EvalContext& context) {
  const Alignment alignment = alignOperands(expr, context);
  const DataType out_dtype = expr.output(0)->dtype();
  EvalTensor out = EvalTensor::allocate(heldOf(out_dtype), alignment.sizes);
  switch (alignment.operands.size()) {
    case 1:
      computeInto<1>(expr, out_dtype, alignment, out);
      break;
    case 2:
      computeInto<2>(expr, out_dtype, alignment, out);
      break;
    case 3:
      computeInto<3>(expr, out_dtype, alignment, out);
      break;
    case 4:
      computeInto<4>(expr, out_dtype, alignment, out);
      break;
    default:
      BRAZE_INTERNAL_CHECK(false) << exprLabel(expr) << " has " << alignment.operands.size()
                                  << " operands; elementwise ops take 1 to 4";
  }
  return {std::move(out)};
}

}  // namespace braze::eval_detail
