// repr(fd): a fusion as the Python function that defines it again, written by walking the IR
// (inputs, then each Expr of fusion.exprs(), then the outputs), not by replaying the calls
// that built it. Executed with FusionDefinition and DataType in scope and called on a fresh
// definition, it rebuilds a fusion with the same canonical form (the tests check it).

#include <pybind11/stl.h>

#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "bindings.h"
#include "braze/error.h"
#include "braze/ir/scalar.h"

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

/// Whether a Python literal gives this constant back through the op builders.
bool isNaturalDtype(const ScalarValue& value, DataType dtype) {
  if (std::holds_alternative<bool>(value)) return dtype == DataType::Bool;
  // Sizes, widths, starts and steps are Index constants the builders make from Python ints.
  if (std::holds_alternative<int64_t>(value))
    return dtype == DataType::Int64 || dtype == DataType::Index;
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
  explicit Writer(const Fusion& fusion) : fusion_(fusion) {}

  std::string write() {
    out_ << "def braze_fusion(fd: FusionDefinition) -> None:\n";
    for (const Val* input : fusion_.inputs()) defineInput(input);
    for (const Expr* expr : fusion_.exprs()) writeExpr(*expr);
    for (const Val* output : fusion_.outputs()) {
      const Val* input = fusion_.aliasedInput(output);
      line("fd.add_output(" + name(output) +
           (input != nullptr ? ", alias_input=" + name(input) : std::string()) + ")");
    }
    if (fusion_.inputs().empty() && fusion_.outputs().empty()) line("pass");
    return out_.str();
  }

 private:
  void line(const std::string& text) { out_ << "    " << text << "\n"; }

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
  std::string name(const Val* val) {
    if (auto it = names_.find(val); it != names_.end()) return it->second;
    if (const auto* scalar = val->dynCast<Scalar>()) {
      if (scalar->isConstant()) {
        const ScalarValue& value = *scalar->value();
        if (isNaturalDtype(value, scalar->dtype())) return literal(value);
        const std::string var = variable(val);
        line(var + " = fd.define_scalar(" + literal(value) +
             ", dtype=" + dtypeName(scalar->dtype()) + ")");
        return names_[val] = var;
      }
      if (const Expr* definition = val->definition(); definition != nullptr) {
        writeExpr(*definition);
        return names_.at(val);
      }
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
    }
    return lhs + " = ";
  }

  void writeExpr(const Expr& expr) {
    if (written_.count(&expr)) return;
    written_.insert({&expr, true});
    const std::string op(toString(expr.op()));
    std::vector<std::string> args;
    for (const Val* input : expr.inputs()) args.push_back(name(input));
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
        // Stored as each dim's start and step with the count in the output's extent; written
        // with nvFuser's end indices, which only constant bounds give back exactly.
        std::vector<std::string> starts, ends, steps;
        const std::vector<IterDomain*> dims = out->logicalNoReductions();
        for (size_t d = 0; d < dims.size(); ++d) {
          const auto* start = expr.input(1 + 2 * d)->dynCast<Scalar>();
          const auto* step = expr.input(2 + 2 * d)->dynCast<Scalar>();
          const Scalar* count = dims[d]->logicalExtent();
          BRAZE_USER_CHECK(start && step && start->isConstant() && step->isConstant() &&
                           count->isConstant())
              << "repr: slice " << out->name() << " has symbolic bounds in dim " << d
              << "; only constant slices can be written as a definition yet";
          const int64_t begin = *start->constantInt();
          const int64_t stride = *step->constantInt();
          starts.push_back(std::to_string(begin));
          ends.push_back(std::to_string(begin + *count->constantInt() * stride));
          steps.push_back(std::to_string(stride));
        }
        call("slice(" + args[0] + ", start_indices=" + list(starts) +
             ", end_indices=" + list(ends) + ", strides=" + list(steps) + ")");
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
  std::ostringstream out_;
  std::map<const Val*, std::string> names_;
  std::map<const Expr*, bool> written_;
  int constants_ = 0;
};

}  // namespace

void bindRepro(py::module_& m) {
  m.def(
      "python_definition", [](const Fusion& fusion) { return Writer(fusion).write(); },
      py::arg("fusion"),
      "The fusion as `def braze_fusion(fd: FusionDefinition) -> None:` with one statement per "
      "op");
}

}  // namespace braze::python
