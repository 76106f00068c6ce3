// A fusion as a row program (braze/codegen/row_program.h): planned once (planRowProgram), then
// written as one struct whose member functions the template calls per group of elements. Each
// tensor is a local in its compute type, as in a template epilogue; a reduction's result is
// `stat[k]`, set by the template once the block (cluster) has combined the pass.

#include "braze/codegen/row_program.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "braze/error.h"
#include "braze/ops/elementwise.h"
#include "braze/sched/reference_dim_map.h"
#include "codegen/op_printer.h"
#include "codegen/row_program_writer.h"
#include "codegen/template_values.h"

namespace braze {

namespace {

using codegen::Rendered;

struct RowPlan {
  const TensorView* reference = nullptr;
  ReferenceDimMap dims;
  std::vector<const Expr*> exprs;  ///< producers first
  std::vector<const TensorView*> row_inputs;
  std::vector<const Scalar*> scalars;
  std::vector<const Expr*> reductions;
  std::vector<int64_t> pass_of;
  int64_t passes = 0;
  std::vector<const TensorView*> element_outputs;
  std::vector<const TensorView*> row_outputs;
  /// Extents of input tensors' dims, as the kernel reads them: "e_T0.size[1]".
  codegen::ExtentTexts extents;
  /// Per tensor: the last pass whose results its value reads (-1: none).
  std::unordered_map<const Val*, int64_t> level;
  /// Tensors with one value per row (every dim a broadcast or the rows' dim), reductions'
  /// results excepted: computed once per row (prepareRow), not per element.
  std::unordered_set<const Val*> row_values;
  /// Inputs indexed along the columns only (weights, biases): read a vector at a time when the
  /// template vouches they are contiguous.
  std::vector<const TensorView*> column_inputs;
  /// Reductions over the rows (sum over M of an [M, N] value: a weight's gradient), computed
  /// as every element is stored; their results are known only once every row is done.
  std::vector<const Expr*> column_reductions;
  /// Column reductions' results and every value computed from them: [N] values the template
  /// writes once its grid has combined the column partials (storeColumn).
  std::unordered_set<const Val*> column_values;
  std::vector<const TensorView*> column_outputs;
};

bool isRowReductionOp(OpKind op) {
  return op == OpKind::Sum || op == OpKind::Max || op == OpKind::Min;
}

bool isPointwiseOp(OpKind op) {
  return isElementwise(op) || op == OpKind::Broadcast || op == OpKind::Expand || op == OpKind::Set;
}

std::string paramName(const Val& val) {
  return codegen::templateParameterName(val);
}
std::string localName(const Val& val) {
  return codegen::templateLocalName(val);
}

// The reference dims of `tv`'s dims that are neither broadcasts nor reduced, in order.
std::vector<int64_t> mappedDims(const RowPlan& plan, const TensorView& tv) {
  std::vector<int64_t> result;
  const std::vector<int64_t>& to_ref = plan.dims.at(&tv);
  for (int64_t d = 0; d < tv.nDims(); ++d) {
    if (!tv.axis(d)->isBroadcast() && !tv.axis(d)->isReduction())
      result.push_back(to_ref[static_cast<size_t>(d)]);
  }
  return result;
}

std::optional<std::string> classifyInputs(const Fusion& fusion, RowPlan& plan) {
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr) continue;
    for (int64_t d = 0; d < tv->nDims(); ++d) {
      if (!tv->axis(d)->isBroadcast())
        plan.extents.emplace(tv->axis(d)->extent(),
                             paramName(*tv) + ".size[" + std::to_string(d) + "]");
    }
    const std::vector<int64_t> dims = mappedDims(plan, *tv);
    if (std::find(dims.begin(), dims.end(), -1) != dims.end())
      return "input " + tv->name() +
             " has a dim that indexes neither the rows nor the columns of " +
             plan.reference->name();
    if (dims == std::vector<int64_t>{0, 1}) {
      plan.row_inputs.push_back(tv);
      continue;
    }
    if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d == 0; }))
      plan.row_values.insert(tv);
    else if (dims == std::vector<int64_t>{1})
      plan.column_inputs.push_back(tv);
  }
  return std::nullopt;
}

std::optional<std::string> classifyExprs(const Fusion& fusion, RowPlan& plan) {
  std::unordered_map<const Val*, int64_t>& level = plan.level;
  const auto levelOf = [&](const Val* v) {
    const auto at = level.find(v);
    return at == level.end() ? int64_t{-1} : at->second;
  };
  for (const Expr* expr : fusion.exprs()) {
    const bool tensor_expr = std::any_of(expr->outputs().begin(), expr->outputs().end(),
                                         [](const Val* v) { return v->isA<TensorView>(); });
    if (!tensor_expr) continue;
    const auto* out = expr->output(0)->as<TensorView>();
    const std::string what = std::string(toString(expr->op())) + " (" + out->name() + ")";
    if (!isRowReductionOp(expr->op()) && !isPointwiseOp(expr->op()))
      return what + " is neither pointwise nor a row reduction; a row program has no " +
             "reshapes, permutes, slices, Welford or reductions over other dims";
    if (expr->outputs().size() != 1) return what + " has several outputs";
    const DataType compute = codegen::computeDtype(out->dtype());
    if (compute != DataType::Float32 && compute != DataType::Bool)
      return what + " computes in " + std::string(toString(out->dtype())) +
             "; a row program computes in float32 (and bool for masks)";
    int64_t needs = -1;
    for (const Val* input : expr->inputs()) {
      if (const auto* scalar = input->dynCast<Scalar>()) {
        if (auto problem =
                codegen::templateScalarProblem(fusion, *scalar, plan.extents, plan.scalars))
          return what + ": " + *problem;
        continue;
      }
      needs = std::max(needs, levelOf(input));
    }
    const bool reads_columns =
        std::any_of(expr->inputs().begin(), expr->inputs().end(),
                    [&](const Val* v) { return plan.column_values.count(v) != 0; });
    if (isRowReductionOp(expr->op())) {
      const auto* in = expr->input(0)->as<TensorView>();
      const auto& axes = expr->attribute<std::vector<int64_t>>("axes");
      const std::vector<int64_t>& to_ref = plan.dims.at(in);
      const int64_t reduced = axes.size() == 1 && !in->axis(axes[0])->isBroadcast()
                                  ? to_ref[static_cast<size_t>(axes[0])]
                                  : -1;
      if (reads_columns)
        return what + " reduces a value computed from a reduction over the rows; a row " +
               "program reduces values of the rows only";
      if (compute != DataType::Float32) return what + " does not accumulate in float32";
      if (reduced == 1) {
        plan.reductions.push_back(expr);
        plan.pass_of.push_back(needs + 1);
        plan.passes = std::max(plan.passes, needs + 2);
        level[out] = needs + 1;
      } else if (reduced == 0 && mappedDims(plan, *in) == std::vector<int64_t>{0, 1}) {
        // Over the rows: accumulated as each element is stored, after every pass.
        plan.column_reductions.push_back(expr);
        plan.column_values.insert(out);
      } else {
        return what +
               " does not reduce one dim of the [M, N] rows alone; a row program reduces each "
               "row (softmax, norms) or each column of [M, N] values (a weight's gradient)";
      }
    } else if (reads_columns) {
      const std::vector<int64_t> dims = mappedDims(plan, *out);
      if (std::find(dims.begin(), dims.end(), 0) != dims.end())
        return what + " combines a reduction over the rows with values of each row; a row " +
               "program computes [N] values only from such reductions";
      plan.column_values.insert(out);
    } else {  // pointwise: checked above
      level[out] = needs;
      const std::vector<int64_t> dims = mappedDims(plan, *out);
      if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d == 0; }))
        plan.row_values.insert(out);
    }
    plan.exprs.push_back(expr);
  }
  return std::nullopt;
}

std::optional<std::string> classifyOutputs(const Fusion& fusion, RowPlan& plan) {
  if (!fusion.outputAliases().empty()) return std::string("the fusion aliases an output");
  for (size_t i = 0; i < fusion.outputs().size(); ++i) {
    const auto* tv = fusion.outputs()[i]->dynCast<TensorView>();
    const std::string which = "output " + std::to_string(i);
    if (tv == nullptr) return which + " is a scalar";
    if (fusion.isInput(tv)) return which + " (" + tv->name() + ") is an input";
    if (std::count(fusion.outputs().begin(), fusion.outputs().end(), tv) > 1)
      return which + " (" + tv->name() + ") is listed twice";
    std::vector<int64_t> dims;
    const std::vector<int64_t>& to_ref = plan.dims.at(tv);
    for (int64_t d = 0; d < tv->nDims(); ++d) {
      if (tv->axis(d)->isReduction()) continue;
      if (tv->axis(d)->isBroadcast())
        return which + " (" + tv->name() + ") has a broadcast dim; store [M, N] or [M]";
      dims.push_back(to_ref[static_cast<size_t>(d)]);
    }
    if (plan.column_values.count(tv)) {
      if (dims != std::vector<int64_t>{1})
        return which + " (" + tv->name() + ") is computed from a reduction over the rows " +
               "but is not [N]";
      plan.column_outputs.push_back(tv);
    } else if (dims == std::vector<int64_t>{0, 1})
      plan.element_outputs.push_back(tv);
    else if (dims == std::vector<int64_t>{0})
      plan.row_outputs.push_back(tv);
    else
      return which + " (" + tv->name() + ") is neither [M, N] nor [M] of the rows of " +
             plan.reference->name();
  }
  if (plan.element_outputs.empty() && plan.row_outputs.empty() && plan.column_outputs.empty())
    return std::string("the fusion has no outputs");
  return std::nullopt;
}

std::variant<RowPlan, std::string> planRowProgram(const Fusion& fusion) {
  RowPlan plan;
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv != nullptr && tv->nDims() > 2)
      return "input " + tv->name() + " has rank " + std::to_string(tv->nDims()) +
             "; a row program handles [M, N] tensors";
  }
  for (const Val* input : fusion.inputs()) {
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr || tv->nDims() != 2) continue;
    if (!tv->axis(0)->isBroadcast() && !tv->axis(1)->isBroadcast()) {
      plan.reference = tv;
      break;
    }
  }
  if (plan.reference == nullptr)
    return std::string("the fusion has no [M, N] input (rank 2, no broadcast dims)");
  for (const Expr* expr : fusion.exprs()) {
    for (const Val* val : expr->outputs()) {
      const auto* tv = val->dynCast<TensorView>();
      if (tv != nullptr && tv->rank() > 2)
        return tv->name() + " has rank " + std::to_string(tv->rank()) +
               "; a row program handles [M, N] tensors";
    }
  }
  plan.dims = mapDimsToReference(fusion, plan.reference);
  if (auto problem = classifyInputs(fusion, plan)) return *problem;
  if (auto problem = classifyExprs(fusion, plan)) return *problem;
  if (auto problem = classifyOutputs(fusion, plan)) return *problem;
  return plan;
}

// Writes locals for the values `targets` need, in one of three modes:
//   - per element (writeElement): row values are the members prepareRow set (rv_*);
//   - per row (writeRow, level L): row values of an earlier level are members, those of level
//     L are computed here;
//   - per column (writeColumn): column reductions' results come from `total`.
// Inputs are loaded, row reductions read from `stat`, every other expr computed.
class ValueWriter {
 public:
  ValueWriter(const Fusion& fusion, const RowPlan& plan, bool contiguous_columns)
      : fusion_(fusion), plan_(plan), contiguous_columns_(contiguous_columns) {}
  void setStagedColumns(bool staged) { staged_columns_ = staged; }

  /// Values at elements j + v of `row`; with `kept`, the kept operands (setKept) are read from
  /// `kept[]` instead of computed again.
  std::string writeElement(const std::vector<const Val*>& targets, const std::string& indent,
                           bool kept = false) {
    return write(
        targets, indent, [&](const Val* v) { return isElementLeaf(v, kept); },
        [&](const Val* v) {
          const auto at = kept_.find(v);
          return kept && at != kept_.end()
                     ? "kept[" + std::to_string(at->second * vector_) + " + v]"
                     : "rv_" + v->name();
        });
  }
  /// Reduction operands the template keeps for store (slot k: kept[k * kVector + v]).
  void setKept(const std::vector<const Val*>& kept) {
    for (size_t k = 0; k < kept.size(); ++k) kept_[kept[k]] = static_cast<int64_t>(k);
  }
  /// Whether computing `targets` per element reads `v` (row values are leaves).
  bool reads(const std::vector<const Val*>& targets, const Val* v) const {
    return upstream(targets, [&](const Val* u) { return isElementLeaf(u, false); }).count(v) != 0;
  }
  /// [N] values at column j, from the column reductions' results `total[k]`.
  std::string writeColumn(const std::vector<const Val*>& targets, const std::string& indent) {
    return write(
        targets, indent, [&](const Val* v) { return columnReductionIndex(v) >= 0; },
        [&](const Val* v) { return "total[" + std::to_string(columnReductionIndex(v)) + "]"; });
  }
  /// Row values of level `level` (the last pass they read; -1: none).
  std::string writeRow(const std::vector<const Val*>& targets, int64_t level,
                       const std::string& indent) {
    return write(targets, indent, [&](const Val* v) {
      const auto at = plan_.level.find(v);
      return plan_.row_values.count(v) != 0 && (at == plan_.level.end() ? -1 : at->second) < level;
    });
  }

  /// Column inputs the values of `targets` read at elements (see columnVectorLoads).
  std::vector<const TensorView*> columnInputsRead(const std::vector<const Val*>& targets) const {
    const std::unordered_set<const Val*> seen =
        upstream(targets, [&](const Val* v) { return plan_.row_values.count(v) != 0; });
    std::vector<const TensorView*> result;
    for (const TensorView* tv : plan_.column_inputs) {
      if (seen.count(tv) && vectorColumn(*tv)) result.push_back(tv);
    }
    return result;
  }

  /// A column input read `vector` elements at a time: contiguous (the template vouches) and no
  /// wider than 16 bytes a group, so the group's alignment follows from j's.
  bool vectorColumn(const TensorView& tv) const {
    return staged_columns_ || (contiguous_columns_ && vector_ * sizeInBytes(tv.dtype()) <= 16);
  }
  void setVector(int64_t vector) { vector_ = vector; }

 private:
  template <typename IsLeaf>
  std::unordered_set<const Val*> upstream(const std::vector<const Val*>& targets,
                                          IsLeaf is_leaf) const {
    std::unordered_set<const Val*> needed;
    std::vector<const Val*> work(targets.begin(), targets.end());
    while (!work.empty()) {
      const Val* v = work.back();
      work.pop_back();
      if (!v->isA<TensorView>() || !needed.insert(v).second) continue;
      if (is_leaf(v) || fusion_.isInput(v) || reductionIndex(v) >= 0) continue;
      for (const Val* input : v->definition()->inputs()) work.push_back(input);
    }
    return needed;
  }

  // Leaves (row values, or column reductions' results) are read as `leaf_text` says.
  template <typename IsLeaf>
  std::string write(const std::vector<const Val*>& targets, const std::string& indent,
                    IsLeaf is_leaf) {
    return write(targets, indent, is_leaf, [](const Val* v) { return "rv_" + v->name(); });
  }
  template <typename IsLeaf, typename LeafText>
  std::string write(const std::vector<const Val*>& targets, const std::string& indent,
                    IsLeaf is_leaf, LeafText leaf_text) {
    const std::unordered_set<const Val*> needed = upstream(targets, is_leaf);
    std::ostringstream os;
    for (const Val* input : fusion_.inputs()) {
      if (!needed.count(input)) continue;
      const auto* tv = input->as<TensorView>();
      os << indent << local(*tv) << (is_leaf(tv) ? leaf_text(tv) : loadText(*tv)) << ";\n";
    }
    for (const Expr* expr : plan_.exprs) {
      const Val* out = expr->output(0);
      if (!needed.count(out)) continue;
      const int64_t k = reductionIndex(out);
      std::string value = is_leaf(out) ? leaf_text(out)
                          : k >= 0     ? "stat[" + std::to_string(k) + "]"
                                       : codegen::templateExprValue(fusion_, *expr, plan_.extents);
      os << indent << local(*out->as<TensorView>()) << value << ";\n";
    }
    return os.str();
  }

 public:
  /// Row inputs the values of `targets` read (kept operands as leaves with `kept`): their
  /// vectors are loaded once per call.
  std::vector<size_t> rowInputsRead(const std::vector<const Val*>& targets,
                                    bool kept = false) const {
    const std::unordered_set<const Val*> seen =
        upstream(targets, [&](const Val* v) { return isElementLeaf(v, kept); });
    std::vector<size_t> result;
    for (size_t i = 0; i < plan_.row_inputs.size(); ++i) {
      if (seen.count(plan_.row_inputs[i])) result.push_back(i);
    }
    return result;
  }

 private:
  bool isElementLeaf(const Val* v, bool kept) const {
    return plan_.row_values.count(v) != 0 || (kept && kept_.count(v) != 0);
  }
  int64_t reductionIndex(const Val* v) const {
    for (size_t k = 0; k < plan_.reductions.size(); ++k) {
      if (plan_.reductions[k]->output(0) == v) return static_cast<int64_t>(k);
    }
    return -1;
  }
  int64_t columnReductionIndex(const Val* v) const {
    for (size_t k = 0; k < plan_.column_reductions.size(); ++k) {
      if (plan_.column_reductions[k]->output(0) == v) return static_cast<int64_t>(k);
    }
    return -1;
  }

  static std::string local(const TensorView& tv) {
    return "const " + codegen::computeType(codegen::computeDtype(tv.dtype())) + " " +
           localName(tv) + " = ";
  }

  std::string loadText(const TensorView& tv) const {
    Rendered element;
    element.dtype = tv.dtype();
    const auto row = std::find(plan_.row_inputs.begin(), plan_.row_inputs.end(), &tv);
    if (row != plan_.row_inputs.end()) {
      element.text = "r" + std::to_string(row - plan_.row_inputs.begin()) + ".values[v]";
    } else if (vectorColumn(tv) &&
               std::count(plan_.column_inputs.begin(), plan_.column_inputs.end(), &tv)) {
      element.text = "c_" + tv.name() + ".values[v]";
    } else if (contiguous_columns_ &&
               std::count(plan_.column_inputs.begin(), plan_.column_inputs.end(), &tv)) {
      element.text = "braze::loadReadOnly(" + paramName(tv) + ".data + j + v)";
    } else {
      std::string offset;
      const std::vector<int64_t>& to_ref = plan_.dims.at(&tv);
      for (int64_t d = 0; d < tv.nDims(); ++d) {
        if (tv.axis(d)->isBroadcast()) continue;
        offset += (offset.empty() ? "" : " + ") +
                  std::string(to_ref[static_cast<size_t>(d)] == 0 ? "row" : "(j + v)") + " * " +
                  paramName(tv) + ".stride[" + std::to_string(d) + "]";
      }
      element.text = "braze::loadReadOnly(" + paramName(tv) + ".data + " +
                     (offset.empty() ? "0" : offset) + ")";
    }
    return codegen::convert(element, codegen::computeDtype(tv.dtype()));
  }

  const Fusion& fusion_;
  const RowPlan& plan_;
  const bool contiguous_columns_;
  bool staged_columns_ = false;
  int64_t vector_ = 1;
  std::unordered_map<const Val*, int64_t> kept_;
};

std::string vectorType(const TensorView& tv, int64_t vector) {
  return "braze::Vector<" + codegen::storageType(tv.dtype()) + ", " + std::to_string(vector) + ">";
}

// `r<i>`: row input i's `vector` elements at position re of rows[i] (the chunk in shared memory,
// or the vector a thread holds in registers).
std::string rowVectorLoads(const RowPlan& plan, const std::vector<size_t>& inputs, int64_t vector,
                           const std::string& indent) {
  std::string text;
  for (size_t i : inputs) {
    const TensorView& tv = *plan.row_inputs[i];
    const std::string type = vectorType(tv, vector);
    text += indent + type + " r" + std::to_string(i) + ";\n" + indent + "braze_row_copy<sizeof(r" +
            std::to_string(i) + ")>(&r" + std::to_string(i) + ", rows[" + std::to_string(i) +
            "] + re * " + std::to_string(sizeInBytes(tv.dtype())) + ");\n";
  }
  return text;
}

// `c_<name>`: a contiguous column input's `vector` elements at column j: from its chunk in
// shared memory (cols[k], at position e) where the template stages it, else from global memory.
std::string columnVectorLoads(const RowPlan& plan, const std::vector<const TensorView*>& inputs,
                              int64_t vector, bool staged, const std::string& indent) {
  std::string text;
  for (const TensorView* tv : inputs) {
    const std::string type = vectorType(*tv, vector);
    const auto k = std::find(plan.column_inputs.begin(), plan.column_inputs.end(), tv) -
                   plan.column_inputs.begin();
    const std::string source =
        staged ? "cols[" + std::to_string(k) + "] + e * " + std::to_string(sizeInBytes(tv->dtype()))
               : paramName(*tv) + ".data + j";
    text += indent + type + " c_" + tv->name() + ";\n" + indent + "braze_row_copy<sizeof(c_" +
            tv->name() + ")>(&c_" + tv->name() + ", " + source + ");\n";
  }
  return text;
}

// Whether computing `v` per element calls a float function or divides: more than a few
// instructions (an exponential alone is about nine), so worth a register to compute once.
bool costlyPerElement(const RowPlan& plan, const Fusion& fusion, const Val* v) {
  std::vector<const Val*> work{v};
  std::unordered_set<const Val*> seen;
  while (!work.empty()) {
    const Val* u = work.back();
    work.pop_back();
    if (!u->isA<TensorView>() || !seen.insert(u).second || plan.row_values.count(u) ||
        fusion.isInput(u) || u->definition() == nullptr)
      continue;
    const Expr* def = u->definition();
    if (std::count(plan.reductions.begin(), plan.reductions.end(), def)) continue;
    switch (def->op()) {
      case OpKind::Exp:
      case OpKind::Exp2:
      case OpKind::Expm1:
      case OpKind::Log:
      case OpKind::Log2:
      case OpKind::Log1p:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Tan:
      case OpKind::Tanh:
      case OpKind::Sigmoid:
      case OpKind::Gelu:
      case OpKind::Silu:
      case OpKind::Erf:
      case OpKind::Erfc:
      case OpKind::Div:
      case OpKind::TrueDiv:
      case OpKind::Pow:
      case OpKind::Atan2:
        return true;
      default:
        break;
    }
    for (const Val* input : def->inputs()) work.push_back(input);
  }
  return false;
}

// The row reductions' operands that the [M, N] outputs read again and that are costly to
// compute (softmax's exponentials): with keep_reduction_operands the template keeps them per
// element from the pass that reduces them until store, which reads them instead.
std::vector<const Val*> keptOperands(const Fusion& fusion, const RowPlan& plan,
                                     const ValueWriter& values) {
  std::vector<const Val*> store_targets(plan.element_outputs.begin(), plan.element_outputs.end());
  for (const Expr* reduction : plan.column_reductions) store_targets.push_back(reduction->input(0));
  std::vector<const Val*> kept;
  for (const Expr* reduction : plan.reductions) {
    const Val* operand = reduction->input(0);
    if (std::count(kept.begin(), kept.end(), operand) || !values.reads(store_targets, operand) ||
        !costlyPerElement(plan, fusion, operand))
      continue;
    kept.push_back(operand);
  }
  return kept;
}

}  // namespace

std::variant<RowProgramShape, std::string> analyzeRowProgram(const Fusion& fusion) {
  auto planned = planRowProgram(fusion);
  if (auto* problem = std::get_if<std::string>(&planned)) return *problem;
  const RowPlan& plan = std::get<RowPlan>(planned);
  RowProgramShape shape;
  shape.row_inputs = plan.row_inputs;
  shape.reductions = static_cast<int64_t>(plan.reductions.size());
  shape.passes = plan.passes;
  shape.element_outputs = plan.element_outputs;
  shape.column_inputs = plan.column_inputs;
  shape.column_reductions = static_cast<int64_t>(plan.column_reductions.size());
  shape.column_outputs = plan.column_outputs;
  const ValueWriter values(fusion, plan, false);
  shape.kept_operands = static_cast<int64_t>(keptOperands(fusion, plan, values).size());
  return shape;
}

namespace codegen {

EpilogueCode writeRowProgram(const Fusion& fusion, const KernelTemplate::RowProgram& program) {
  auto planned = planRowProgram(fusion);
  if (const auto* problem = std::get_if<std::string>(&planned)) {
    BRAZE_USER_CHECK(false) << "code generation: the kernel template's row program: " << *problem;
  }
  const RowPlan& plan = std::get<RowPlan>(planned);
  const int64_t vector = program.vector;
  const auto reductions = static_cast<int64_t>(plan.reductions.size());

  EpilogueCode code;
  std::ostringstream fields;
  const auto addTensor = [&](const TensorView& tv) {
    const std::string type = "braze::Tensor<" + storageType(tv.dtype()) + ", " +
                             std::to_string(tv.rank()) + ", IndexT> ";
    code.parameters += ", " + type + paramName(tv);
    code.arguments += (code.arguments.empty() ? "" : ", ") + paramName(tv);
    fields << "  " << type << paramName(tv) << ";\n";
    code.kernel_parameters.push_back(fusionTensorParameter(fusion, tv));
  };
  for (const Val* input : fusion.inputs()) {
    if (const auto* tv = input->dynCast<TensorView>()) addTensor(*tv);
  }
  for (const TensorView* tv : plan.element_outputs) addTensor(*tv);
  for (const TensorView* tv : plan.row_outputs) addTensor(*tv);
  for (const TensorView* tv : plan.column_outputs) addTensor(*tv);
  for (const Scalar* scalar : plan.scalars) {
    const std::string type = scalarParameterType(scalar->dtype()) + " ";
    code.parameters += ", " + type + paramName(*scalar);
    code.arguments += (code.arguments.empty() ? "" : ", ") + paramName(*scalar);
    fields << "  " << type << paramName(*scalar) << ";\n";
    KernelParameter p;
    p.kind = KernelParameter::Kind::InputScalar;
    p.val = scalar;
    p.dtype = scalar->dtype();
    p.fusion_position = fusion.inputIndex(scalar);
    code.kernel_parameters.push_back(std::move(p));
  }
  // Scratch the template combines column partials through (zeroed once; semaphores the
  // template uses must be zero again when it returns).
  if (program.workspace_bytes != nullptr) {
    code.parameters += ", char* braze_workspace";
    code.arguments += (code.arguments.empty() ? "" : ", ") + std::string("braze_workspace");
    KernelParameter p;
    p.kind = KernelParameter::Kind::Workspace;
    p.dtype = DataType::Int64;
    p.workspace_bytes = program.workspace_bytes;
    code.kernel_parameters.push_back(std::move(p));
  }
  // Declared either way (null without a workspace), so templates compile for both.
  fields << "  char* workspace;\n";
  BRAZE_USER_CHECK(plan.column_reductions.empty() || program.workspace_bytes != nullptr)
      << "code generation: the fusion reduces over its rows ("
      << plan.column_reductions.front()->output(0)->name()
      << "), so the kernel template's row program needs a workspace to combine the column "
         "partials of its CTAs (KernelTemplate::RowProgram::workspace_bytes)";

  const bool staged = program.staged_columns;
  BRAZE_USER_CHECK(!staged || program.contiguous_columns)
      << "code generation: a row program's staged columns must be contiguous ones";
  ValueWriter values(fusion, plan, program.contiguous_columns);
  values.setVector(vector);
  values.setStagedColumns(staged);
  const std::vector<const Val*> kept = program.keep_reduction_operands
                                           ? keptOperands(fusion, plan, values)
                                           : std::vector<const Val*>{};
  values.setKept(kept);
  std::ostringstream os;
  // Vectors of 16-bit elements are structs of a class type, which the compiler copies member
  // by member (eight 2-byte stores for eight bf16): every vector moves as raw words instead.
  os << "template <int kBytes>\n"
        "__device__ __forceinline__ void braze_row_copy(void* dst, const void* src) {\n"
        "  if constexpr (kBytes % 16 == 0) {\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < kBytes / 16; ++i)\n"
        "      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];\n"
        "  } else if constexpr (kBytes == 8) {\n"
        "    *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src);\n"
        "  } else if constexpr (kBytes == 4) {\n"
        "    *reinterpret_cast<unsigned*>(dst) = *reinterpret_cast<const unsigned*>(src);\n"
        "  } else {\n"
        "    static_assert(kBytes == 2, \"a row program's vectors are 2, 4, 8 or 16k bytes\");\n"
        "    *reinterpret_cast<unsigned short*>(dst) = *reinterpret_cast<const unsigned "
        "short*>(src);\n"
        "  }\n}\n\n";
  // 16-bit outputs round two floats per instruction (cvt.rn.bf16x2 / f16x2, the same rounding as
  // one at a time): a float-to-16-bit conversion alone runs at a quarter of the FMA rate.
  os << "template <bool kBFloat16, int kCount>\n"
        "__device__ __forceinline__ void braze_row_store_16bit(void* dst, const float "
        "(&values)[kCount]) "
        "{\n"
        "  static_assert(kCount % 2 == 0, \"pairs of 16-bit values\");\n"
        "  unsigned words[kCount / 2];\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < kCount / 2; ++i) {\n"
        "    if constexpr (kBFloat16) {\n"
        "      asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(words[i]) : \"f\"(values[2 * i + "
        "1]), "
        "\"f\"(values[2 * i]));\n"
        "    } else {\n"
        "      asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(words[i]) : \"f\"(values[2 * i + 1]), "
        "\"f\"(values[2 * i]));\n"
        "    }\n"
        "  }\n"
        "  braze_row_copy<kCount * 2>(dst, words);\n"
        "}\n\n";
  os << "struct braze_row_program {\n" << fields.str();
  os << "  float stat[" << std::max<int64_t>(reductions, 1) << "];\n";
  // Values with one per row, set by prepareRow once what they read is known.
  std::vector<const Val*> row_values;
  for (const Val* input : fusion.inputs()) {
    if (plan.row_values.count(input)) row_values.push_back(input);
  }
  for (const Expr* expr : plan.exprs) {
    if (plan.row_values.count(expr->output(0))) row_values.push_back(expr->output(0));
  }
  for (const Val* v : row_values)
    os << "  " << computeType(computeDtype(v->dtype())) << " rv_" << v->name() << ";\n";
  os << "\n";
  os << "  static constexpr int kRowInputs = " << plan.row_inputs.size() << ";\n";
  os << "  static constexpr int kReductions = " << reductions << ";\n";
  os << "  static constexpr int kPasses = " << plan.passes << ";\n";
  os << "  static constexpr int kVector = " << vector << ";\n";
  const auto column_reductions = static_cast<int64_t>(plan.column_reductions.size());
  os << "  static constexpr int kColumnReductions = " << column_reductions << ";\n";
  os << "  // Column partials per call of store: kVector per column reduction.\n";
  os << "  static constexpr int kColumnSlots = " << std::max<int64_t>(column_reductions * vector, 1)
     << ";\n";
  os << "  // Reduction operands store reads from the template's kept[] (kVector each).\n";
  os << "  static constexpr int kKept = " << kept.size() << ";\n";
  os << "  static constexpr int kKeptSlots = "
     << std::max<int64_t>(static_cast<int64_t>(kept.size()) * vector, 1) << ";\n\n";
  const std::string reference = paramName(*plan.reference);
  os << "  __device__ long long rowCount() const { return " << reference << ".size[0]; }\n";
  os << "  __device__ long long rowLength() const { return " << reference << ".size[1]; }\n";
  os << "  __host__ __device__ static constexpr int rowInputBytes(int input) {\n";
  for (size_t i = 0; i < plan.row_inputs.size(); ++i)
    os << "    if (input == " << i << ") return " << sizeInBytes(plan.row_inputs[i]->dtype())
       << ";\n";
  os << "    return 0;\n  }\n";
  os << "  __host__ __device__ static constexpr int passOf(int reduction) {\n";
  for (int64_t k = 0; k < reductions; ++k)
    os << "    if (reduction == " << k << ") return " << plan.pass_of[static_cast<size_t>(k)]
       << ";\n";
  os << "    return -1;\n  }\n";
  // Column inputs the template stages in shared memory (all of them, or none).
  os << "  static constexpr int kColumnInputs = " << (staged ? plan.column_inputs.size() : 0)
     << ";\n";
  os << "  __host__ __device__ static constexpr int columnInputBytes(int input) {\n";
  for (size_t i = 0; staged && i < plan.column_inputs.size(); ++i)
    os << "    if (input == " << i << ") return " << sizeInBytes(plan.column_inputs[i]->dtype())
       << ";\n";
  os << "    return 0;\n  }\n";
  os << "  __device__ const char* columnInputAddress(int input, long long j) const {\n";
  for (size_t i = 0; staged && i < plan.column_inputs.size(); ++i)
    os << "    if (input == " << i << ") return reinterpret_cast<const char*>("
       << paramName(*plan.column_inputs[i]) << ".data + j);\n";
  os << "    return nullptr;\n  }\n";
  os << "  __device__ const char* rowInputAddress(int input, long long row, long long j) const {\n";
  for (size_t i = 0; i < plan.row_inputs.size(); ++i) {
    const std::string name = paramName(*plan.row_inputs[i]);
    os << "    if (input == " << i << ") return reinterpret_cast<const char*>(" << name
       << ".data + row * " << name << ".stride[0] + j);\n";
  }
  os << "    return nullptr;\n  }\n";
  // identity/combine of the row reductions, columnIdentity/columnCombine of the column ones.
  const auto writeReductionFunctions = [&](const std::string& prefix,
                                           const std::vector<const Expr*>& exprs) {
    os << "  __device__ static float " << prefix << (prefix.empty() ? "identity" : "Identity")
       << "(int reduction) {\n";
    for (size_t k = 0; k < exprs.size(); ++k)
      os << "    if (reduction == " << k << ") return " << identityText(*exprs[k], 0) << ";\n";
    os << "    return 0.0f;\n  }\n";
    os << "  __device__ static float " << prefix << (prefix.empty() ? "combine" : "Combine")
       << "(int reduction, float a, float b) {\n";
    for (size_t k = 0; k < exprs.size(); ++k)
      os << "    if (reduction == " << k << ") return " << reductionFunctor(*exprs[k])
         << "(a, b);\n";
    os << "    return a;\n  }\n";
  };
  writeReductionFunctions("", plan.reductions);
  writeReductionFunctions("column", plan.column_reductions);
  os << "\n";

  // prepareRow(level, row): the row values that read results up to pass `level` (-1: none).
  os << "  __device__ __forceinline__ void prepareRow(int level, long long row) {\n";
  os << "    const long long j = 0;\n    const int v = 0;\n    (void)j;\n    (void)v;\n";
  for (int64_t level = -1; level < plan.passes; ++level) {
    std::vector<const Val*> targets;
    for (const Val* v : row_values) {
      if (plan.level.count(v) ? plan.level.at(v) == level : level == -1) targets.push_back(v);
    }
    if (targets.empty()) continue;
    os << "    if (level == " << level << ") {\n" << values.writeRow(targets, level, "      ");
    for (const Val* v : targets) os << "      rv_" << v->name() << " = " << localName(*v) << ";\n";
    os << "    }\n";
  }
  os << "  }\n\n";

  // accumulate: one block per pass, each computing only what its reductions read.
  os << "  __device__ __forceinline__ void accumulate(int pass, long long row, long long j, "
        "const char* const* rows, int re, const char* const* cols, int e, float (&acc)["
     << std::max<int64_t>(reductions, 1) << "], float (&kept)[kKeptSlots]) const {\n";
  for (int64_t pass = 0; pass < plan.passes; ++pass) {
    std::vector<const Val*> operands;
    std::vector<int64_t> members;
    for (int64_t k = 0; k < reductions; ++k) {
      if (plan.pass_of[static_cast<size_t>(k)] != pass) continue;
      operands.push_back(plan.reductions[static_cast<size_t>(k)]->input(0));
      members.push_back(k);
    }
    os << "    if (pass == " << pass << ") {\n";
    os << rowVectorLoads(plan, values.rowInputsRead(operands), vector, "      ");
    os << columnVectorLoads(plan, values.columnInputsRead(operands), vector, staged, "      ");
    os << "#pragma unroll\n      for (int v = 0; v < " << vector << "; ++v) {\n";
    os << values.writeElement(operands, "        ");
    for (size_t m = 0; m < members.size(); ++m)
      os << "        acc[" << members[m] << "] = combine(" << members[m] << ", acc[" << members[m]
         << "], " << localName(*operands[m]) << ");\n";
    for (size_t k = 0; k < kept.size(); ++k) {
      if (std::count(operands.begin(), operands.end(), kept[k]))
        os << "        kept[" << k * static_cast<size_t>(vector)
           << " + v] = " << localName(*kept[k]) << ";\n";
    }
    os << "      }\n    }\n";
  }
  os << "  }\n\n";

  // store: every [M, N] output, and each column reduction's operand into its partials.
  std::vector<const Val*> element_targets(plan.element_outputs.begin(), plan.element_outputs.end());
  for (const Expr* reduction : plan.column_reductions)
    element_targets.push_back(reduction->input(0));
  os << "  __device__ __forceinline__ void store(long long row, long long j, const char* const* "
        "rows, int re, const char* const* cols, int e, float (&col)[kColumnSlots], const float "
        "(&kept)[kKeptSlots]) const {\n";
  os << rowVectorLoads(plan, values.rowInputsRead(element_targets, true), vector, "    ");
  os << columnVectorLoads(plan, values.columnInputsRead(element_targets), vector, staged, "    ");
  // An output that is a cast to bf16 or fp16 stores the value before the cast: rounded once,
  // in pairs.
  const auto packed = [&](const TensorView& tv) {
    return vector % 2 == 0 && (tv.dtype() == DataType::BFloat16 || tv.dtype() == DataType::Float16);
  };
  const auto storedValue = [&](const TensorView& tv) -> const Val* {
    const Expr* def = tv.definition();
    if (packed(tv) && def != nullptr && def->op() == OpKind::Cast &&
        def->input(0)->dtype() == DataType::Float32)
      return def->input(0);
    return &tv;
  };
  for (const TensorView* tv : plan.element_outputs) {
    if (packed(*tv)) {
      os << "    float o_" << tv->name() << "[" << vector << "];\n";
      if (storedValue(*tv) != tv) element_targets.push_back(storedValue(*tv));
    } else {
      os << "    " << vectorType(*tv, vector) << " o_" << tv->name() << ";\n";
    }
  }
  os << "#pragma unroll\n    for (int v = 0; v < " << vector << "; ++v) {\n";
  os << values.writeElement(element_targets, "      ", true);
  for (const TensorView* tv : plan.element_outputs) {
    os << "      o_" << tv->name() << (packed(*tv) ? "[v]" : ".values[v]") << " = "
       << localName(*storedValue(*tv)) << ";\n";
  }
  for (int64_t k = 0; k < column_reductions; ++k) {
    const std::string slot = "col[" + std::to_string(k * vector) + " + v]";
    os << "      " << slot << " = columnCombine(" << k << ", " << slot << ", "
       << localName(*plan.column_reductions[static_cast<size_t>(k)]->input(0)) << ");\n";
  }
  os << "    }\n";
  for (const TensorView* tv : plan.element_outputs) {
    const std::string address = paramName(*tv) + ".data + row * " + paramName(*tv) + ".size[1] + j";
    if (packed(*tv)) {
      os << "    braze_row_store_16bit<" << (tv->dtype() == DataType::BFloat16 ? "true" : "false")
         << ">(" << address << ", o_" << tv->name() << ");\n";
    } else {
      os << "    braze_row_copy<sizeof(o_" << tv->name() << ")>(" << address << ", &o_"
         << tv->name() << ");\n";
    }
  }
  os << "  }\n\n";

  // storeColumn: every [N] output at column j from the column reductions' totals.
  std::vector<const Val*> column_targets(plan.column_outputs.begin(), plan.column_outputs.end());
  os << "  __device__ __forceinline__ void storeColumn(long long j, const float* total) const {\n";
  os << "    const long long row = 0;\n    const int v = 0;\n    (void)row;\n    (void)v;\n"
        "    (void)total;\n";
  os << values.writeColumn(column_targets, "    ");
  for (const TensorView* tv : plan.column_outputs)
    os << "    " << paramName(*tv) << ".data[j * " << paramName(*tv)
       << ".stride[0]] = " << localName(*tv) << ";\n";
  os << "  }\n\n";

  // Row outputs are row values: prepareRow has them.
  os << "  __device__ __forceinline__ void storeRow(long long row) const {\n";
  for (const TensorView* tv : plan.row_outputs)
    os << "    " << paramName(*tv) << ".data[row] = rv_" << tv->name() << ";\n";
  os << "  }\n};\n\n";
  code.function = os.str();
  // The row program's tensors are the kernel's first parameters: no leading comma.
  if (!code.parameters.empty()) code.parameters.erase(0, 2);
  return code;
}

}  // namespace codegen

}  // namespace braze
