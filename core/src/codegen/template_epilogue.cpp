// A kernel template's epilogue: the exprs after its anchor, found and checked once
// (planEpilogue), then written as one device function the template calls per group of
// `vector` elements. Each tensor of the epilogue is a local in its compute type, as the
// reference evaluator holds intermediates in full precision: the anchor is the fp32
// accumulator itself, and only casts and the stores of outputs round. Inputs are read with
// braze::loadReadOnly: the fusion's inputs are never its outputs here (schedulers refuse
// aliases), and loads the compiler may move past the stores of earlier elements overlap
// instead of waiting in turn.

#include "braze/codegen/template_epilogue.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "braze/error.h"
#include "braze/ops/elementwise.h"
#include "codegen/epilogue_writer.h"
#include "codegen/op_printer.h"
#include "codegen/template_values.h"

namespace braze {

namespace {

using codegen::Rendered;

struct EpiloguePlan {
  /// Tensor exprs after the anchor, producers first.
  std::vector<const Expr*> exprs;
  /// Per tensor of the epilogue: the anchor dim each of its dims stands for.
  std::unordered_map<const TensorView*, std::vector<int64_t>> anchor_dims;
  /// Fusion inputs the exprs read, tensors then scalars, in the order first read.
  std::vector<const TensorView*> inputs;
  std::vector<const Scalar*> scalars;
};

bool producesTensor(const Expr& expr) {
  return std::any_of(expr.outputs().begin(), expr.outputs().end(),
                     [](const Val* v) { return v->isA<TensorView>(); });
}

bool isEpilogueOp(OpKind op) {
  return isElementwise(op) || op == OpKind::Broadcast || op == OpKind::Expand || op == OpKind::Set;
}

template <typename T>
void appendOnce(std::vector<const T*>& list, const T* item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Tensors the anchor's definition reads, directly or through other exprs.
std::unordered_set<const Val*> upstreamOf(const TensorView& anchor) {
  std::unordered_set<const Val*> seen;
  std::vector<const Val*> work(anchor.definition()->inputs().begin(),
                               anchor.definition()->inputs().end());
  while (!work.empty()) {
    const Val* val = work.back();
    work.pop_back();
    if (!seen.insert(val).second || val->definition() == nullptr) continue;
    for (const Val* input : val->definition()->inputs()) work.push_back(input);
  }
  return seen;
}

std::variant<EpiloguePlan, std::string> planEpilogue(const Fusion& fusion, const TensorView& anchor,
                                                     const TensorView* bias,
                                                     const std::vector<TensorView*>& prologue) {
  EpiloguePlan plan;
  const Expr* anchor_def = anchor.definition();
  if (anchor_def == nullptr || &anchor.fusion() != &fusion)
    return "the anchor " + anchor.name() + " is not computed by the fusion";
  const int64_t rank = anchor.rank();
  if (bias != nullptr && (bias->rank() != 1 || !fusion.isInput(bias)))
    return "the accumulator bias " + bias->name() + " must be a 1-d input of the fusion";

  const std::unordered_set<const Val*> upstream = upstreamOf(anchor);
  std::unordered_set<const Val*> downstream = {&anchor};
  for (const Expr* expr : fusion.exprs()) {
    if (expr == anchor_def || !producesTensor(*expr)) continue;
    const Val* out = expr->output(0);
    // The template computes its prologue itself.
    if (std::find(prologue.begin(), prologue.end(), out) != prologue.end()) continue;
    if (upstream.count(out))
      return std::string(toString(expr->op())) + " (" + out->name() + ") comes before the anchor " +
             anchor.name() + ": an epilogue has no prologue";
    if (!isEpilogueOp(expr->op()))
      return std::string(toString(expr->op())) + " (" + out->name() + ") after the anchor " +
             anchor.name() + " is not pointwise; an epilogue has elementwise ops, broadcasts " +
             "and expands only";
    if (std::any_of(expr->inputs().begin(), expr->inputs().end(),
                    [&](const Val* v) { return downstream.count(v) != 0; }))
      downstream.insert(out);
    plan.exprs.push_back(expr);
  }

  std::vector<int64_t> identity(static_cast<size_t>(rank));
  std::iota(identity.begin(), identity.end(), 0);
  std::optional<std::string> conflict;
  const auto assign = [&](const TensorView* tv, std::vector<int64_t> dims) {
    auto [at, added] = plan.anchor_dims.emplace(tv, dims);
    if (!added && at->second != dims)
      conflict = tv->name() + " is read at two different positions of the anchor";
  };
  for (size_t i = 0; i < fusion.outputs().size(); ++i) {
    const auto* tv = fusion.outputs()[i]->dynCast<TensorView>();
    const std::string which = "output " + std::to_string(i);
    if (tv == nullptr) return which + " is a scalar; an epilogue stores tensors";
    if (!downstream.count(tv))
      return which + " (" + tv->name() + ") does not depend on the anchor " + anchor.name();
    if (tv->rank() != rank)
      return which + " (" + tv->name() + ") has rank " + std::to_string(tv->rank()) +
             "; the anchor's is " + std::to_string(rank);
    if (std::count(fusion.outputs().begin(), fusion.outputs().end(), tv) > 1)
      return which + " (" + tv->name() + ") is listed twice";
    assign(tv, identity);
  }
  for (auto it = plan.exprs.rbegin(); it != plan.exprs.rend(); ++it) {
    const Expr& expr = **it;
    const auto* out = expr.output(0)->as<TensorView>();
    const auto found = plan.anchor_dims.find(out);
    BRAZE_INTERNAL_CHECK(found != plan.anchor_dims.end())
        << "template epilogue: " << out->name() << " reaches no output";
    const std::vector<int64_t> dims = found->second;
    for (const Val* input : expr.inputs()) {
      if (const auto* scalar = input->dynCast<Scalar>()) {
        if (auto problem = codegen::templateScalarProblem(fusion, *scalar, {}, plan.scalars))
          return *problem;
        continue;
      }
      const auto* tv = input->as<TensorView>();
      std::vector<int64_t> input_dims;
      if (expr.op() == OpKind::Broadcast) {
        const auto& is_new = expr.attribute<std::vector<bool>>("flags");
        for (size_t d = 0; d < is_new.size() && d < dims.size(); ++d) {
          if (!is_new[d]) input_dims.push_back(dims[d]);
        }
      } else {
        input_dims = dims;
      }
      if (static_cast<int64_t>(input_dims.size()) != tv->rank())
        return tv->name() + " (rank " + std::to_string(tv->rank()) + ") is read by " +
               std::string(toString(expr.op())) + " of rank " + std::to_string(out->rank());
      assign(tv, std::move(input_dims));
      if (fusion.isInput(tv)) appendOnce(plan.inputs, tv);
    }
  }
  if (conflict) return *conflict;
  // Parameters in the fusion's input order, whatever order the exprs read them in.
  const auto byInputIndex = [&](const Val* a, const Val* b) {
    return fusion.inputIndex(a) < fusion.inputIndex(b);
  };
  std::sort(plan.inputs.begin(), plan.inputs.end(), byInputIndex);
  std::sort(plan.scalars.begin(), plan.scalars.end(), byInputIndex);
  const auto at = plan.anchor_dims.find(&anchor);
  if (at == plan.anchor_dims.end()) return "no output depends on the anchor " + anchor.name();
  if (at->second != identity) return "the anchor " + anchor.name() + " is read with its dims moved";
  return plan;
}

std::string paramName(const Val& val) {
  return codegen::templateParameterName(val);
}
std::string localName(const TensorView& tv) {
  return codegen::templateLocalName(tv);
}

// `tv`'s element at the anchor index j0, j1, ...: through its strides, skipping broadcast dims.
std::string inputOffset(const TensorView& tv, const std::vector<int64_t>& anchor_dims) {
  std::string offset;
  for (size_t d = 0; d < anchor_dims.size(); ++d) {
    if (tv.axis(static_cast<int64_t>(d))->isBroadcast()) continue;
    offset += (offset.empty() ? "" : " + ") + std::string("j") + std::to_string(anchor_dims[d]) +
              " * " + paramName(tv) + ".stride[" + std::to_string(d) + "]";
  }
  return offset.empty() ? "0" : offset;
}

// Outputs are allocated row-major (generated_kernel.h): the offset from their sizes.
std::string outputOffset(const TensorView& tv, int64_t rank) {
  std::string offset = "i0";
  for (int64_t d = 1; d < rank; ++d) {
    offset = "(" + offset + ") * " + paramName(tv) + ".size[" + std::to_string(d) + "] + i" +
             std::to_string(d);
  }
  return offset;
}

}  // namespace

std::optional<std::string> templateEpilogueProblem(const Fusion& fusion, const TensorView* anchor,
                                                   const TensorView* accumulator_bias,
                                                   const std::vector<TensorView*>& prologue) {
  if (anchor == nullptr) return "no anchor";
  auto plan = planEpilogue(fusion, *anchor, accumulator_bias, prologue);
  if (auto* problem = std::get_if<std::string>(&plan)) return *problem;
  return std::nullopt;
}

namespace codegen {

KernelParameter fusionTensorParameter(const Fusion& fusion, const TensorView& tv) {
  KernelParameter p;
  const bool input = fusion.isInput(&tv);
  p.kind = input ? KernelParameter::Kind::InputTensor : KernelParameter::Kind::OutputTensor;
  p.val = &tv;
  p.dtype = tv.dtype();
  p.rank = tv.rank();
  if (input) {
    p.fusion_position = fusion.inputIndex(&tv);
  } else {
    const auto& outputs = fusion.outputs();
    p.fusion_position = std::find(outputs.begin(), outputs.end(), &tv) - outputs.begin();
  }
  return p;
}

EpilogueCode writeTemplateEpilogue(const Fusion& fusion, const KernelTemplate::Epilogue& epilogue) {
  const TensorView& anchor = *epilogue.anchor;
  const TensorView* bias = epilogue.accumulator_bias;
  auto planned = planEpilogue(fusion, anchor, bias, epilogue.prologue);
  if (const auto* problem = std::get_if<std::string>(&planned)) {
    BRAZE_USER_CHECK(false) << "code generation: the kernel template's epilogue: " << *problem;
  }
  const EpiloguePlan& plan = std::get<EpiloguePlan>(planned);
  const int64_t rank = anchor.rank();
  const int64_t vector = epilogue.vector;

  EpilogueCode code;
  const auto addTensor = [&](const TensorView& tv) {
    code.parameters += ", braze::Tensor<" + storageType(tv.dtype()) + ", " +
                       std::to_string(tv.rank()) + ", IndexT> " + paramName(tv);
    code.arguments += ", " + paramName(tv);
    code.kernel_parameters.push_back(fusionTensorParameter(fusion, tv));
  };
  std::vector<const TensorView*> inputs = plan.inputs;
  if (bias != nullptr && std::find(inputs.begin(), inputs.end(), bias) == inputs.end()) {
    inputs.push_back(bias);
    std::sort(inputs.begin(), inputs.end(), [&](const Val* a, const Val* b) {
      return fusion.inputIndex(a) < fusion.inputIndex(b);
    });
  }
  for (const TensorView* tv : inputs) addTensor(*tv);
  for (const Scalar* scalar : plan.scalars) {
    code.parameters += ", " + scalarParameterType(scalar->dtype()) + " " + paramName(*scalar);
    code.arguments += ", " + paramName(*scalar);
    KernelParameter p;
    p.kind = KernelParameter::Kind::InputScalar;
    p.val = scalar;
    p.dtype = scalar->dtype();
    p.fusion_position = fusion.inputIndex(scalar);
    code.kernel_parameters.push_back(std::move(p));
  }
  std::vector<const TensorView*> outputs;
  for (const Val* out : fusion.outputs()) outputs.push_back(out->as<TensorView>());
  for (const TensorView* tv : outputs) addTensor(*tv);

  // braze_epilogue_if stores only where `braze_store` holds and reads its inputs either way: a
  // template calls it with indices clamped into the anchor for elements outside it, so one
  // copy serves whole and edge tiles and the loads carry no branch. braze_epilogue stores
  // always. braze_epilogue_staged hands the first output's values back instead of storing
  // them, for a template that writes them through shared memory with bulk tensor copies.
  std::ostringstream os;
  std::string indices;
  for (int64_t d = 0; d < rank; ++d) indices += "long long i" + std::to_string(d) + ", ";
  // `vector` elements of `tv` in its storage type: what each call loads or stores at once.
  const auto vectorType = [&](const TensorView& tv) {
    return "braze::Vector<" + storageType(tv.dtype()) + ", " + std::to_string(vector) + ">";
  };
  const TensorView& staged = *outputs.front();
  os << "using braze_staged_output = " << vectorType(staged) << ";\n\n";
  // Inputs whose innermost dim is the anchor's may be read `vector` elements at a time: where
  // bit k of the functions' template argument braze_vector_inputs is set, the caller vouches
  // that fusion input k has stride 1 there and its groups of `vector` are aligned.
  std::vector<const TensorView*> vectorizable;
  for (const TensorView* tv : plan.inputs) {
    const std::vector<int64_t>& dims = plan.anchor_dims.at(tv);
    const int64_t bytes = vector * sizeInBytes(tv->dtype());
    if (vector > 1 && (bytes == 2 || bytes == 4 || bytes == 8) && !dims.empty() &&
        dims.back() == rank - 1 && !tv->axis(tv->rank() - 1)->isBroadcast())
      vectorizable.push_back(tv);
  }
  const auto isVectorInput = [&](const TensorView& tv) {
    return "((braze_vector_inputs >> " + std::to_string(fusion.inputIndex(&tv)) + ") & 1)";
  };
  const auto writeFunction = [&](const char* name, bool stage_first_output) {
    os << "template <unsigned long long braze_vector_inputs = 0>\n";
    os << "__device__ __forceinline__ void " << name << "(bool braze_store, " << indices
       << "const float (&values)[" << vector << "]"
       << (stage_first_output ? ", braze_staged_output& braze_staged" : "") << code.parameters
       << ") {\n";
    for (const TensorView* tv : outputs)
      os << "  " << vectorType(*tv) << " o_" << tv->name() << ";\n";
    for (const TensorView* tv : vectorizable) {
      const std::string type = vectorType(*tv);
      os << "  " << type << " g_" << tv->name() << ";\n  if constexpr " << isVectorInput(*tv)
         << " {\n";
      for (int64_t d = 0; d < rank; ++d) os << "    const long long j" << d << " = i" << d << ";\n";
      os << "    g_" << tv->name() << " = braze::loadReadOnly(reinterpret_cast<const " << type
         << "*>(" << paramName(*tv) << ".data + " << inputOffset(*tv, plan.anchor_dims.at(tv))
         << "));\n  }\n";
    }
    os << "#pragma unroll\n  for (int v = 0; v < " << vector << "; ++v) {\n";
    for (int64_t d = 0; d < rank; ++d) {
      os << "    const long long j" << d << " = i" << d << (d == rank - 1 ? " + v" : "") << ";\n";
    }
    // Every tensor is held in its compute type (the anchor: the fp32 accumulator, not rounded
    // to its dtype), as the reference evaluator holds intermediates; casts and stores round.
    const auto local = [](const TensorView& tv) {
      return "    const " + computeType(computeDtype(tv.dtype())) + " " + localName(tv) + " = ";
    };
    os << local(anchor) << "values[v]";
    if (bias != nullptr) {
      const std::string at = bias->axis(0)->isBroadcast() ? "0"
                                                          : "j" + std::to_string(rank - 1) + " * " +
                                                                paramName(*bias) + ".stride[0]";
      Rendered element;
      element.text = "braze::loadReadOnly(" + paramName(*bias) + ".data + " + at + ")";
      element.dtype = bias->dtype();
      os << " + " << convert(element, DataType::Float32);
    }
    os << ";\n";
    for (const TensorView* tv : plan.inputs) {
      Rendered element;
      element.text = "braze::loadReadOnly(" + paramName(*tv) + ".data + " +
                     inputOffset(*tv, plan.anchor_dims.at(tv)) + ")";
      if (std::find(vectorizable.begin(), vectorizable.end(), tv) != vectorizable.end())
        element.text =
            "(" + isVectorInput(*tv) + " ? g_" + tv->name() + ".values[v] : " + element.text + ")";
      element.dtype = tv->dtype();
      os << local(*tv) << convert(element, computeDtype(tv->dtype())) << ";\n";
    }
    for (const Expr* expr : plan.exprs) {
      os << local(*expr->output(0)->as<TensorView>())
         << codegen::templateExprValue(fusion, *expr, {}) << ";\n";
    }
    for (const TensorView* tv : outputs) {
      os << "    o_" << tv->name() << ".values[v] = " << localName(*tv) << ";\n";
    }
    os << "  }\n";
    if (stage_first_output) os << "  braze_staged = o_" << staged.name() << ";\n";
    os << "  if (!braze_store) return;\n";
    for (const TensorView* tv : outputs) {
      if (stage_first_output && tv == &staged) continue;
      os << "  *reinterpret_cast<" << vectorType(*tv) << "*>(" << paramName(*tv) << ".data + "
         << outputOffset(*tv, rank) << ") = o_" << tv->name() << ";\n";
    }
    os << "}\n\n";
  };
  writeFunction("braze_epilogue_if", false);
  writeFunction("braze_epilogue_staged", true);
  os << "__device__ __forceinline__ void braze_epilogue(" << indices << "const float (&values)["
     << vector << "]" << code.parameters << ") {\n  braze_epilogue_if(true, ";
  for (int64_t d = 0; d < rank; ++d) os << "i" << d << ", ";
  os << "values" << code.arguments << ");\n}\n\n";
  code.function = os.str();
  return code;
}

}  // namespace codegen

}  // namespace braze
