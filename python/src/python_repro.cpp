// repr(fd): a fusion as the Python function that defines it again, written by walking the IR
// (inputs, then each tensor op of fusion.exprs() with the scalar ops it reads, then the
// outputs), not by replaying the calls that built it. Executed with FusionDefinition and
// DataType in scope and called on a fresh definition, it rebuilds a fusion with the same
// canonical form (the tests check it). Symbolic slices are written as their normalized bounds
// with manual_normalization=True, and the sizes an op computed as that op's tensor.size(d).

#include <pybind11/stl.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "bindings.h"
#include "braze/error.h"
#include "braze/ir/scalar.h"
#include "braze/ir/sharding.h"
#include "braze/ir/stream_axes.h"
#include "braze/ops/slice_bounds.h"

namespace braze::python {

namespace {

std::string dtypeName(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
      return "DataType.Bool";
    case DataType::Int32:
      return "DataType.Int32";
    case DataType::Int64:
      return "DataType.Int";
    case DataType::Float16:
      return "DataType.Half";
    case DataType::BFloat16:
      return "DataType.BFloat16";
    case DataType::Float32:
      return "DataType.Float";
    case DataType::Float64:
      return "DataType.Double";
    case DataType::Index:
      return "DataType.Index";
    case DataType::Float8_e4m3fn:
      return "DataType.Float8_e4m3fn";
    case DataType::Float8_e5m2:
      return "DataType.Float8_e5m2";
  }
  return "DataType.Null";
}

std::string literal(const ScalarValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "True" : "False";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  const double d = std::get<double>(value);
  if (std::isnan(d)) return "float('nan')";
  if (std::isinf(d)) return d > 0 ? "float('inf')" : "float('-inf')";
  // The shortest text that reads back as the same double.
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), d);
  std::string s(text, error == std::errc() ? end : text);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

/// Whether a Python literal gives this constant back through the op builders. Sizes, widths,
/// starts and steps are Index constants the builders make from Python ints (`index_literals`);
/// an elementwise op makes an int64 constant of a Python int, so an Index operand of one (the
/// `minimum(1, s0)` of a slice's start) must be written with its dtype.
bool isNaturalDtype(const ScalarValue& value, DataType dtype, bool index_literals) {
  if (std::holds_alternative<bool>(value)) return dtype == DataType::Bool;
  if (std::holds_alternative<int64_t>(value))
    return dtype == DataType::Int64 || (index_literals && dtype == DataType::Index);
  return dtype == DataType::Float64;
}

std::string list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + items[i];
  return text + "]";
}

template <typename T>
std::vector<std::string> strings(const std::vector<T>& values) {
  std::vector<std::string> text;
  for (const T& v : values) {
    if constexpr (std::is_same_v<T, bool>) {
      text.push_back(v ? "True" : "False");
    } else {
      text.push_back(std::to_string(v));
    }
  }
  return text;
}

class Writer {
 public:
  /// `copied_aliases`: output position -> input position of the outputs that the Python layer
  /// copies into a strided input after the run (they are not aliases in the IR).
  Writer(const Fusion& fusion, std::map<int, int> copied_aliases)
      : fusion_(fusion), copied_aliases_(std::move(copied_aliases)) {}

  std::string write() {
    out_ << "def braze_fusion(fd: FusionDefinition) -> None:\n";
    for (const Val* input : fusion_.inputs()) {
      defineInput(input);
      if (const auto* tv = input->dynCast<TensorView>()) {
        writeSharding(*tv);
        writeStreamAxis(*tv);
      }
    }
    const std::vector<Expr*> exprs = fusion_.exprs();
    for (const Expr* expr : exprs) {
      for (const Val* output : expr->outputs()) {
        const auto* tv = output->dynCast<TensorView>();
        if (tv == nullptr) continue;
        for (const IterDomain* id : tv->logicalNoReductions()) {
          if (!id->logicalExtent()->isConstant()) extent_owners_.emplace(id->logicalExtent(), expr);
        }
      }
    }
    // Scalar ops are written where a tensor op or an output first reads them (name()): the
    // count a slice rebuilds itself would otherwise be written again, unused.
    for (const Expr* expr : exprs) {
      if (std::any_of(expr->outputs().begin(), expr->outputs().end(),
                      [](const Val* output) { return output->isA<TensorView>(); })) {
        writeExpr(*expr);
        for (const Val* output : expr->outputs()) {
          if (const auto* tv = output->dynCast<TensorView>()) {
            writeSharding(*tv);
            writeStreamAxis(*tv);
          }
        }
      }
    }
    for (int position = 0; position < static_cast<int>(fusion_.outputs().size()); ++position) {
      const Val* output = fusion_.outputs()[position];
      const Val* input = fusion_.aliasedInput(output);
      if (auto copied = copied_aliases_.find(position); copied != copied_aliases_.end()) {
        BRAZE_USER_CHECK(copied->second >= 0 &&
                         copied->second < static_cast<int>(fusion_.inputs().size()))
            << "python_definition: output " << position << " is copied into input "
            << copied->second << ", but the fusion has " << fusion_.inputs().size() << " inputs";
        input = fusion_.inputs()[copied->second];
      }
      line("fd.add_output(" + name(output) +
           (input != nullptr ? ", alias_input=" + name(input) : std::string()) + ")");
    }
    if (fusion_.inputs().empty() && fusion_.outputs().empty()) line("pass");
    return out_.str();
  }

 private:
  void line(const std::string& text) { out_ << "    " << text << "\n"; }

  // The split and parallelize calls that give `tv` its stream axis, after its sharding: the
  // sharded axes' splits before it move it along the loop domain.
  void writeStreamAxis(const TensorView& tv) {
    const std::optional<StreamAxis> axis = requestedStreamAxis(tv);
    if (!axis) return;
    int64_t loop_position = axis->axis;
    if (const std::optional<Sharding> sharding = requestedSharding(tv)) {
      for (const ShardedAxis& sharded : sharding->axes) {
        if (sharded.axis < axis->axis && sharding->mesh.size(sharded.mesh_dim) > 1) ++loop_position;
      }
    }
    const std::string position = std::to_string(loop_position);
    if (axis->by_count) {
      line(name(&tv) + ".split(" + position + ", " + std::to_string(axis->factor) + ", False)");
    } else if (axis->factor > 1) {
      line(name(&tv) + ".split(" + position + ", " + std::to_string(axis->factor) + ")");
    }
    line(name(&tv) + ".axis(" + position + ").parallelize(ParallelType.Stream)");
  }

  // The mesh, split and parallelize calls that give `tv` its sharding: splits from the last
  // sharded axis back, so that each split leaves the earlier axes where they are, then each
  // outer axis parallelized at its place in the split loop domain.
  void writeSharding(const TensorView& tv) {
    const std::optional<Sharding> sharding = requestedSharding(tv);
    if (!sharding) return;
    std::string devices;
    for (int64_t device : sharding->mesh.devices())
      devices += (devices.empty() ? "" : ", ") + std::to_string(device);
    std::string mesh = "DeviceMesh([" + devices + "]";
    if (sharding->mesh.numDims() > 1) {
      mesh += ", shape=[" + std::to_string(sharding->mesh.size(0)) + ", " +
              std::to_string(sharding->mesh.size(1)) + "]";
    }
    line(name(&tv) + ".set_device_mesh(" + mesh + "))");
    std::vector<ShardedAxis> axes = sharding->axes;
    std::sort(axes.begin(), axes.end(),
              [](const ShardedAxis& a, const ShardedAxis& b) { return a.axis > b.axis; });
    for (const ShardedAxis& sharded : axes) {
      const int64_t parts = sharding->mesh.size(sharded.mesh_dim);
      if (parts > 1) {
        line(name(&tv) + ".outer_split(" + std::to_string(sharded.axis) + ", " +
             std::to_string(parts) + ")");
      }
    }
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {  // first axis first
      const ShardedAxis& sharded = *it;
      int64_t position = sharded.axis;
      for (const ShardedAxis& other : axes) {
        if (other.axis < sharded.axis && sharding->mesh.size(other.mesh_dim) > 1) ++position;
      }
      line(name(&tv) + ".axis(" + std::to_string(position) + ").parallelize(ParallelType." +
           std::string(meshDimName(sharded.mesh_dim, sharding->mesh.numDims())) + ")");
    }
  }

  /// The IR's name ("T3", "s5"), so that the repr reads like the printed fusion; constants
  /// print as their value, so they are numbered c0, c1, ... in the order they are written.
  std::string variable(const Val* val) {
    const auto* scalar = val->dynCast<Scalar>();
    if (scalar != nullptr && scalar->isConstant()) return "c" + std::to_string(constants_++);
    return val->name();
  }

  void defineInput(const Val* input) {
    const std::string var = variable(input);
    names_[input] = var;
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr) {
      line(var + " = fd.define_scalar(dtype=" + dtypeName(input->dtype()) + ")");
      return;
    }
    const std::vector<IterDomain*> dims = tv->logicalNoReductions();
    const auto rank = static_cast<int64_t>(dims.size());
    std::vector<std::string> shape;
    for (int64_t d = 0; d < rank; ++d) {
      const IterDomain& id = *dims[static_cast<size_t>(d)];
      const Scalar* extent = id.logicalExtent();
      if (id.isBroadcast() && !id.hasExpandedExtent()) {
        shape.push_back("1");
      } else if (extent->isConstant()) {
        shape.push_back(std::to_string(*extent->constantInt()));
      } else {
        shape.push_back("-1");
      }
      if (!extent->isConstant() && !names_.count(extent))
        names_[extent] = var + ".size(" + std::to_string(d) + ")";
    }
    // nvFuser's layout arguments: contiguity in memory order, stride_order per logical dim.
    std::vector<int64_t> order = tv->allocationOrder();
    if (order.empty()) {
      for (int64_t d = 0; d < rank; ++d) order.push_back(d);
    }
    std::vector<std::string> contiguity;
    for (int64_t d : order) {
      const std::optional<bool>& flag = tv->contiguity()[static_cast<size_t>(d)];
      contiguity.push_back(!flag ? "None" : *flag ? "True" : "False");
    }
    std::string text = var + " = fd.define_tensor(shape=" + list(shape) +
                       ", contiguity=" + list(contiguity) + ", dtype=" + dtypeName(tv->dtype());
    bool identity = true;
    for (int64_t k = 0; k < rank; ++k) identity &= order[static_cast<size_t>(k)] == k;
    if (!identity) {
      std::vector<int64_t> stride_order(static_cast<size_t>(rank));
      for (int64_t k = 0; k < rank; ++k)
        stride_order[static_cast<size_t>(order[static_cast<size_t>(k)])] = rank - 1 - k;
      text += ", stride_order=" + list(strings(stride_order));
    }
    line(text + ")");
  }

  /// The Python expression of `val`: a variable, a literal, or a scalar op written first.
  std::string name(const Val* val, bool index_literals = true) {
    if (auto it = names_.find(val); it != names_.end()) return it->second;
    if (writeExtentOwner(val)) return names_.at(val);
    if (const auto* scalar = val->dynCast<Scalar>()) {
      if (scalar->isConstant()) {
        const ScalarValue& value = *scalar->value();
        if (isNaturalDtype(value, scalar->dtype(), index_literals)) return literal(value);
        const std::string var = variable(val);
        line(var + " = fd.define_scalar(" + literal(value) +
             ", dtype=" + dtypeName(scalar->dtype()) + ")");
        return names_[val] = var;
      }
    }
    // A producer written out of fusion.exprs() order, for writeExtentOwner.
    if (const Expr* definition = val->definition(); definition != nullptr) {
      writeExpr(*definition);
      if (auto it = names_.find(val); it != names_.end()) return it->second;
    }
    BRAZE_THROW() << "repr: " << val->name()
                  << " is neither an input, a constant nor computed "
                     "by an op of the fusion";
  }

  std::vector<std::string> extents(const TensorView& tv) {
    std::vector<std::string> sizes;
    for (const IterDomain* id : tv.logicalNoReductions())
      sizes.push_back(name(id->logicalExtent()));
    return sizes;
  }

  std::string assign(const Expr& expr) {
    std::string lhs;
    for (size_t i = 0; i < expr.outputs().size(); ++i) {
      const std::string var = variable(expr.output(i));
      names_[expr.output(i)] = var;
      lhs += (i ? ", " : "") + var;
      if (const auto* tv = expr.output(i)->dynCast<TensorView>()) nameExtents(*tv, var);
    }
    return lhs + " = ";
  }

  /// Writes the first tensor op whose output has the extent `val` when it is not written yet,
  /// so that `val` reads as that tensor's size(d) (nameExtents); false when there is none, or
  /// when that op is being written (a reshape's or a full's own sizes are its arguments).
  bool writeExtentOwner(const Val* val) {
    const auto owner = extent_owners_.find(val);
    if (owner == extent_owners_.end() || written_.count(owner->second)) return false;
    writeExpr(*owner->second);
    return names_.count(val) > 0;
  }

  /// A symbolic extent an op computed (a slice's count, a reshape's inferred size) is read back
  /// as `T3.size(0)`: the op builds it again, and writing its scalar expression instead would
  /// make a second Val of the same value, which the canonical form tells apart.
  void nameExtents(const TensorView& tv, const std::string& var) {
    const std::vector<IterDomain*> dims = tv.logicalNoReductions();
    for (size_t d = 0; d < dims.size(); ++d) {
      const Scalar* extent = dims[d]->logicalExtent();
      if (!extent->isConstant() && !names_.count(extent))
        names_[extent] = var + ".size(" + std::to_string(d) + ")";
    }
  }

  /// The normalized stop of dim `d` of a symbolic slice, as Python. core/src/ops/slice.cpp
  /// makes every count ceil_div(stop - start, step) of the normalized bounds (the division
  /// dropped for a step of 1, the subtraction for a start of 0, both folded for constants), so
  /// the stop is read back from the count, and slice(..., manual_normalization=True) builds
  /// the same count from it.
  std::string sliceStop(const Expr& slice, const TensorView& out, size_t d) {
    if (const std::optional<SliceStop> stop = normalizedSliceStop(slice, d))
      return stop->value != nullptr ? name(stop->value) : std::to_string(stop->constant);
    BRAZE_THROW() << "repr: slice " << out.name() << " has the extent "
                  << out.logicalNoReductions()[d]->logicalExtent()->name() << " in dim " << d
                  << ", which is not ceil_div(stop - start, step) of its start "
                  << slice.input(1 + 2 * d)->name()
                  << " as fd.ops.slice builds it (a fusion saved by an older Braze?), so no "
                     "definition rebuilds it; define the slice again with fd.ops.slice";
  }

  void writeExpr(const Expr& expr) {
    if (written_.count(&expr)) return;
    for (const Val* output : expr.outputs()) {
      if (output->isA<Scalar>()) writeExtentOwner(output);
    }
    if (written_.count(&expr)) return;
    written_.insert({&expr, true});
    // A scalar op whose result is already named is an extent read back with size(d).
    if (std::all_of(expr.outputs().begin(), expr.outputs().end(),
                    [this](const Val* output) { return names_.count(output) > 0; }))
      return;
    const std::string op(toString(expr.op()));
    std::vector<std::string> args;
    for (const Val* input : expr.inputs()) args.push_back(name(input, !isElementwise(expr.op())));
    const auto* out = expr.outputs().empty() ? nullptr : expr.output(0)->dynCast<TensorView>();
    auto call = [&](const std::string& text) { line(assign(expr) + "fd.ops." + text); };
    auto joined = [&](size_t from) {
      std::string text;
      for (size_t i = from; i < args.size(); ++i) text += (i > from ? ", " : "") + args[i];
      return text;
    };
    switch (familyOf(expr.op())) {
      case OpFamily::Unary:
        if (expr.op() == OpKind::Gelu) {
          const std::string approximate = expr.hasAttribute("approximate")
                                              ? expr.attribute<std::string>("approximate")
                                              : "none";
          call("gelu(" + args[0] + ", approximate=\"" + approximate + "\")");
          return;
        }
        call(op + "(" + joined(0) + ")");
        return;
      case OpFamily::Cast:
        call("cast(" + args[0] + ", dtype=" + dtypeName(expr.output(0)->dtype()) + ")");
        return;
      case OpFamily::Binary:
      case OpFamily::Ternary:
        call(op + "(" + joined(0) + ")");
        return;
      default:
        break;
    }
    const auto attributeInts = [&](const char* key) {
      return list(strings(expr.attribute<std::vector<int64_t>>(key)));
    };
    switch (expr.op()) {
      case OpKind::Sum:
      case OpKind::Prod: {
        const DataType in = expr.input(0)->dtype();
        const DataType result = expr.output(0)->dtype();
        const DataType natural =
            isFloatingPoint(in) ? in : DataType::Int64;  // the builders' default result
        call(op + "(" + args[0] + ", dims=" + attributeInts("axes") +
             (result == natural ? "" : ", dtype=" + dtypeName(result)) + ")");
        return;
      }
      case OpKind::Max:
      case OpKind::Min:
        call(op + "(" + args[0] + ", dims=" + attributeInts("axes") + ")");
        return;
      case OpKind::Welford:
        call("welford(" + args[0] + ", dims=" + attributeInts("axes") + ")");
        return;
      case OpKind::Cumsum:
      case OpKind::Cumprod: {
        // The recorded scan reads and writes one dtype; only int32 differs from the builder's
        // default result (int64 for integers).
        const DataType result = expr.output(0)->dtype();
        call(op + "(" + args[0] + ", dim=" + std::to_string(expr.attribute<int64_t>("dim")) +
             (result == DataType::Int32 ? ", dtype=" + dtypeName(result) : "") + ")");
        return;
      }
      case OpKind::Cummax:
      case OpKind::Cummin:
        call(op + "(" + args[0] + ", dim=" + std::to_string(expr.attribute<int64_t>("dim")) + ")");
        return;
      case OpKind::Broadcast:
        call("broadcast(" + args[0] + ", is_broadcast_dim=" +
             list(strings(expr.attribute<std::vector<bool>>("flags"))) + ")");
        return;
      case OpKind::Expand: {
        std::vector<std::string> shape;
        for (const IterDomain* id : out->logicalNoReductions())
          shape.push_back(id->hasExpandedExtent() ? name(id->expandedExtent()) : "-1");
        call("expand(" + args[0] + ", shape=" + list(shape) + ")");
        return;
      }
      case OpKind::Reshape:
        call("reshape(" + args[0] + ", new_shape=" + list(extents(*out)) + ")");
        return;
      case OpKind::Permute:
        call("permute(" + args[0] + ", dims=" + attributeInts("perm") + ")");
        return;
      case OpKind::Squeeze: {
        std::vector<int64_t> dims;
        const auto& flags = expr.attribute<std::vector<bool>>("flags");
        for (size_t d = 0; d < flags.size(); ++d) {
          if (flags[d]) dims.push_back(static_cast<int64_t>(d));
        }
        call("squeeze(" + args[0] + ", dims=" + list(strings(dims)) + ")");
        return;
      }
      case OpKind::Pad: {
        // Stored per dim from the first; written as torch's pairs from the last dim.
        std::vector<std::string> widths;
        const size_t rank = (args.size() - 2) / 2;
        for (size_t d = rank; d-- > 0;) {
          widths.push_back(args[2 + 2 * d]);
          widths.push_back(args[3 + 2 * d]);
        }
        call("pad(" + args[0] + ", pad_widths=" + list(widths) + ", value=" + args[1] + ")");
        return;
      }
      case OpKind::Slice: {
        // Stored as each dim's normalized start and step with the count in the output's
        // extent. Constant bounds are written as nvFuser writes them; symbolic ones as the
        // normalized start and stop, with manual_normalization so that the rebuilt slice does
        // not normalize them again (which would add a second, different count expression).
        std::vector<std::string> starts, ends, steps;
        const std::vector<IterDomain*> dims = out->logicalNoReductions();
        bool constant = true;
        for (size_t d = 0; d < dims.size(); ++d) {
          constant = constant && expr.input(1 + 2 * d)->as<Scalar>()->isConstant() &&
                     dims[d]->logicalExtent()->isConstant();
        }
        for (size_t d = 0; d < dims.size(); ++d) {
          const auto* start = expr.input(1 + 2 * d)->as<Scalar>();
          const int64_t stride = *expr.input(2 + 2 * d)->as<Scalar>()->constantInt();
          const Scalar* count = dims[d]->logicalExtent();
          starts.push_back(args[1 + 2 * d]);
          steps.push_back(std::to_string(stride));
          if (constant) {
            ends.push_back(std::to_string(*start->constantInt() + *count->constantInt() * stride));
          } else {
            ends.push_back(sliceStop(expr, *out, d));
          }
        }
        call("slice(" + args[0] + ", start_indices=" + list(starts) +
             ", end_indices=" + list(ends) + ", strides=" + list(steps) +
             (constant ? "" : ", manual_normalization=True") + ")");
        return;
      }
      case OpKind::Cat:
        call("cat(" + list(args) + ", dim=" + std::to_string(expr.attribute<int64_t>("dim")) + ")");
        return;
      case OpKind::IndexSelect: {
        // An index of another rank than 1 is take; embedding_fwd makes it along the rows of a
        // 2-D weight, and is written as the call that made it.
        const auto* x = expr.input(0)->as<TensorView>();
        const int64_t dim = expr.attribute<int64_t>("dim");
        if (expr.input(1)->as<TensorView>()->rank() == 1) {
          call("index_select(" + args[0] + ", " + args[1] + ", dim=" + std::to_string(dim) + ")");
        } else if (dim == 0 && x->rank() == 2) {
          call("embedding_fwd(" + args[1] + ", " + args[0] + ")");
        } else {
          call("take(" + args[0] + ", " + args[1] + ", dim=" + std::to_string(dim) + ")");
        }
        return;
      }
      case OpKind::Select:
      case OpKind::Gather:
        call(op + "(" + args[0] + ", " + args[1] +
             ", dim=" + std::to_string(expr.attribute<int64_t>("dim")) + ")");
        return;
      case OpKind::Scatter:
        call("scatter(" + args[0] + ", " + args[1] + ", " + args[2] +
             ", dim=" + std::to_string(expr.attribute<int64_t>("dim")) + ")");
        return;
      case OpKind::Full:
        call("full(shape=" + list(extents(*out)) + ", fill_value=" + args[0] +
             ", dtype=" + dtypeName(out->dtype()) + ")");
        return;
      case OpKind::Iota:
        call("iota(" + extents(*out)[0] + ", " + args[0] + ", " + args[1] +
             ", dtype=" + dtypeName(out->dtype()) + ")");
        return;
      case OpKind::Uniform:
      case OpKind::Normal:
        call(op + "(" + args[0] + ", " + args[1] + ", shape=" + list(extents(*out)) +
             ", rng_seed=" + args[2] + ", rng_offset=" + args[3] +
             ", dtype=" + dtypeName(out->dtype()) + ")");
        return;
      case OpKind::Set:
        call("set(" + args[0] + ")");
        return;
      case OpKind::SegmentSet:
        call("segment_set(" + args[0] + ")");
        return;
      case OpKind::StrideOrder: {
        std::vector<std::string> order;
        for (int64_t rank : expr.attribute<std::vector<int64_t>>("stride_order"))
          order.push_back(std::to_string(rank));
        call("stride_order(" + args[0] + ", stride_order=" + list(order) + ")");
        return;
      }
      case OpKind::Matmul:
      case OpKind::Linear:
        call(op + "(" + joined(0) + ")");
        return;
      default:
        BRAZE_THROW() << "repr: " << op << " (" << expr.output(0)->name()
                      << ") cannot be written as a definition yet (made by scheduling?)";
    }
  }

  const Fusion& fusion_;
  std::map<int, int> copied_aliases_;
  std::ostringstream out_;
  std::map<const Val*, std::string> names_;
  /// Exprs written or being written.
  std::map<const Expr*, bool> written_;
  /// Each symbolic extent of an op's output, to the first op (in fusion.exprs() order) making it.
  std::map<const Val*, const Expr*> extent_owners_;
  int constants_ = 0;
};

}  // namespace

void bindRepro(py::module_& m) {
  m.def(
      "python_definition",
      [](const Fusion& fusion, std::map<int, int> copied_aliases) {
        return Writer(fusion, std::move(copied_aliases)).write();
      },
      py::arg("fusion"), py::arg("copied_aliases") = std::map<int, int>{},
      "The fusion as `def braze_fusion(fd: FusionDefinition) -> None:` with one statement per "
      "op; copied_aliases (output position -> input position) names the outputs written back "
      "into strided inputs by FusionDefinition.execute");
}

}  // namespace braze::python
