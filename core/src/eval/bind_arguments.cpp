// Validation of the arguments of a fusion run, then binding: scalar inputs and input extents
// go into the ExpressionEvaluator, input tensors are imported. Everything is checked before
// anything is imported, and every error names the input by position and IR name.

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "braze/eval/argument_binding.h"
#include "braze/ops/elementwise_semantics.h"
#include "eval/eval_tensor.h"

namespace braze::eval_detail {

namespace {

std::string inputLabel(size_t position, const Val& input) {
  return "input " + std::to_string(position) + " (" + input.name() + ")";
}

std::string describeArgument(const ArgumentInfo& argument) {
  if (const auto* tensor = std::get_if<TensorArgumentInfo>(&argument)) {
    return "a tensor " + tensor->description;
  }
  const ScalarValue& value = std::get<ScalarValue>(argument);
  return "the " + std::string(toString(naturalDataType(value))) + " scalar " + toString(value);
}

// Index tensors are stored as int64, so either spelling is accepted for the other.
bool dtypeMatches(DataType expected, DataType actual) {
  const auto normalize = [](DataType d) { return d == DataType::Index ? DataType::Int64 : d; };
  return normalize(expected) == normalize(actual);
}

// A scalar argument fits an input when its category does, or when an integer is given for a
// floating input (as Python lets `2` stand for `2.0`).
bool scalarFits(DataType expected, const ScalarValue& value) {
  switch (heldOf(expected)) {
    case Held::Bool:
      return std::holds_alternative<bool>(value);
    case Held::Int:
      return std::holds_alternative<int64_t>(value);
    case Held::Float:
      return !std::holds_alternative<bool>(value);
  }
  return false;
}

std::string formatLayout(const TensorView& tv) {
  std::ostringstream os;
  os << "allocation order " << formatSizes(tv.allocationOrder()) << ", contiguity [";
  for (size_t i = 0; i < tv.contiguity().size(); ++i) {
    const std::optional<bool>& flag = tv.contiguity()[i];
    os << (i ? ", " : "") << (flag.has_value() ? (*flag ? "true" : "false") : "None");
  }
  os << "]";
  return os.str();
}

// Where a symbolic extent got its value, for the message when another input disagrees.
struct Origin {
  size_t input;
  int64_t dim;  // -1: the extent is itself a scalar input
};

class ArgumentBinder {
 public:
  ArgumentBinder(const Fusion& fusion, const std::vector<ArgumentInfo>& arguments,
                 std::string_view caller, ExpressionEvaluator& scalars)
      : fusion_(fusion), arguments_(arguments), caller_(caller), scalars_(scalars) {}

  void checkKinds() {
    const auto& inputs = fusion_.inputs();
    std::ostringstream names;
    for (size_t i = 0; i < inputs.size(); ++i) names << (i ? ", " : "") << inputs[i]->name();
    BRAZE_USER_CHECK(arguments_.size() == inputs.size())
        << caller_ << ": the fusion has " << inputs.size() << " input"
        << (inputs.size() == 1 ? "" : "s") << (inputs.empty() ? "" : " (" + names.str() + ")")
        << " but " << arguments_.size() << " argument"
        << (arguments_.size() == 1 ? " was" : "s were") << " given";
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Val& input = *inputs[i];
      const ArgumentInfo& argument = arguments_[i];
      if (const auto* tv = input.dynCast<TensorView>()) {
        const auto* host = std::get_if<TensorArgumentInfo>(&argument);
        BRAZE_USER_CHECK(host != nullptr)
            << inputLabel(i, input) << ": expected a " << tv->dtype() << " tensor of rank "
            << tv->rank() << " but got " << describeArgument(argument);
        BRAZE_USER_CHECK(host->has_storage)
            << inputLabel(i, input) << ": the tensor " << host->description << " has no storage";
        BRAZE_USER_CHECK(dtypeMatches(tv->dtype(), host->dtype))
            << inputLabel(i, input) << ": expected dtype " << tv->dtype() << " but got "
            << host->dtype << " (" << host->description << ")";
        const auto rank = static_cast<int64_t>(host->sizes.size());
        BRAZE_USER_CHECK(rank == tv->rank())
            << inputLabel(i, input) << ": expected rank " << tv->rank() << " but got rank " << rank
            << " (" << host->description << ")";
      } else {
        const auto* value = std::get_if<ScalarValue>(&argument);
        BRAZE_USER_CHECK(value != nullptr)
            << inputLabel(i, input) << ": expected a scalar of dtype " << input.dtype()
            << " but got " << describeArgument(argument);
        BRAZE_USER_CHECK(scalarFits(input.dtype(), *value))
            << inputLabel(i, input) << ": expected a scalar of dtype " << input.dtype()
            << " but got " << describeArgument(argument);
      }
    }
  }

  void bindScalars() {
    for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
      const Val* input = fusion_.inputs()[i];
      if (input->isA<TensorView>()) continue;
      ScalarValue value = castScalar(std::get<ScalarValue>(arguments_[i]), input->dtype());
      // A float32 scalar reaches a kernel as a float: hold the value it will have there.
      if (auto* d = std::get_if<double>(&value)) *d = roundToPrecision(*d, input->dtype());
      scalars_.bind(input, value);
      origins_.emplace(input, Origin{i, -1});
    }
  }

  void bindSizes() {
    std::vector<std::pair<size_t, int64_t>> derived;  // (input, dim) of computed extents
    for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
      const auto* tv = fusion_.inputs()[i]->dynCast<TensorView>();
      if (tv == nullptr) continue;
      const TensorArgumentInfo& host = std::get<TensorArgumentInfo>(arguments_[i]);
      const std::vector<IterDomain*> dims = tv->logicalNoReductions();
      for (size_t d = 0; d < dims.size(); ++d) {
        const IterDomain& id = *dims[d];
        const int64_t size = host.sizes[d];
        if (id.isBroadcast() && !id.hasExpandedExtent()) {
          BRAZE_USER_CHECK(size == 1) << inputLabel(i, *tv) << ": dim " << d
                                      << " is a broadcast dim and must have size 1, but has size "
                                      << size << " (" << host.description << ")";
          continue;
        }
        const Scalar* extent = id.logicalExtent();
        if (extent->isConstant()) {
          const int64_t fixed = *extent->constantInt();
          BRAZE_USER_CHECK(size == fixed)
              << inputLabel(i, *tv) << ": dim " << d << " has size " << size
              << " but the fusion fixes it to " << fixed << " (" << host.description << ")";
          continue;
        }
        if (extent->definition() != nullptr) {
          derived.emplace_back(i, static_cast<int64_t>(d));
          continue;
        }
        auto origin = origins_.find(extent);
        if (origin == origins_.end()) {
          scalars_.bind(extent, size);
          origins_.emplace(extent, Origin{i, static_cast<int64_t>(d)});
          continue;
        }
        const int64_t bound = toInt64(*scalars_.evaluate(extent));
        checkShared(i, *tv, d, size, *extent, origin->second, bound);
      }
    }
    // Extents computed from other scalars (possible in hand-built IR) are checked once every
    // leaf is bound.
    for (const auto& [i, d] : derived) {
      const auto& tv = *fusion_.inputs()[i]->as<TensorView>();
      const Scalar* extent = tv.logicalNoReductions()[static_cast<size_t>(d)]->logicalExtent();
      const int64_t size =
          std::get<TensorArgumentInfo>(arguments_[i]).sizes[static_cast<size_t>(d)];
      if (std::optional<ScalarValue> value = scalars_.evaluate(extent)) {
        BRAZE_USER_CHECK(toInt64(*value) == size)
            << inputLabel(i, tv) << ": dim " << d << " has size " << size << " but its extent "
            << extent->name() << " evaluates to " << toInt64(*value);
      } else {
        scalars_.bind(extent, size);
      }
    }
  }

  void checkLayouts() const {
    for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
      const auto* tv = fusion_.inputs()[i]->dynCast<TensorView>();
      if (tv != nullptr) checkLayout(i, *tv, std::get<TensorArgumentInfo>(arguments_[i]));
    }
  }

 private:
  void checkShared(size_t i, const TensorView& tv, size_t d, int64_t size, const Scalar& extent,
                   const Origin& origin, int64_t bound) const {
    if (size == bound) return;
    const Val& other = *fusion_.inputs()[origin.input];
    if (origin.dim < 0) {
      BRAZE_THROW() << inputLabel(i, tv) << ": dim " << d << " has size " << size
                    << " but its extent " << extent.name() << " is scalar "
                    << inputLabel(origin.input, other) << ", which is " << bound;
    }
    BRAZE_THROW() << inputLabel(i, tv) << ": dim " << d << " has size " << size << " but "
                  << other.name() << " (input " << origin.input << ") dim " << origin.dim
                  << " has size " << bound << "; both are extent " << extent.name();
  }

  // The declared layout promises, for each dim marked contiguous, that its stride is the size
  // times the stride of the next inner non-broadcast dim in allocation order (1 for the
  // innermost). Size-1 dims are never indexed, so their strides are free and they pass the
  // expected stride on unchanged.
  static void checkLayout(size_t i, const TensorView& tv, const TensorArgumentInfo& host) {
    if (std::find(host.sizes.begin(), host.sizes.end(), 0) != host.sizes.end()) return;
    const std::vector<int64_t>& order = tv.allocationOrder();
    const std::vector<std::optional<bool>>& contiguity = tv.contiguity();
    int64_t expected = 1;
    for (size_t p = order.size(); p-- > 0;) {
      const auto d = static_cast<size_t>(order[p]);
      if (!contiguity[d].has_value()) continue;  // broadcast dim: no storage
      const int64_t size = host.sizes[d];
      const int64_t stride = host.strides[d];
      if (size == 1) continue;
      if (*contiguity[d]) {
        BRAZE_USER_CHECK(stride == expected)
            << inputLabel(i, tv) << ": dim " << d << " has stride " << stride
            << " but the declared layout (" << formatLayout(tv) << ") needs stride " << expected
            << " (" << host.description
            << "); pass a tensor with that layout, or declare the dim non-contiguous (and the "
               "allocation order the tensor has) when making the input";
      }
      expected = size * stride;
    }
  }

  const Fusion& fusion_;
  const std::vector<ArgumentInfo>& arguments_;
  std::string_view caller_;
  ExpressionEvaluator& scalars_;
  std::unordered_map<const Val*, Origin> origins_;
};

}  // namespace

void bindArguments(const Fusion& fusion, const std::vector<EvaluatorArgument>& arguments,
                   EvalContext& context) {
  std::vector<ArgumentInfo> infos;
  infos.reserve(arguments.size());
  for (const EvaluatorArgument& argument : arguments) {
    if (const auto* tensor = std::get_if<HostTensor>(&argument)) {
      infos.emplace_back(argumentInfoOf(*tensor));
    } else {
      infos.emplace_back(std::get<ScalarValue>(argument));
    }
  }
  validateAndBindArguments(fusion, infos, "evaluateFusion", context.scalars());
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const Val* input = fusion.inputs()[i];
    if (input->isA<TensorView>()) {
      context.setTensor(input, importHostTensor(std::get<HostTensor>(arguments[i])));
    }
  }
}

}  // namespace braze::eval_detail

namespace braze {

TensorArgumentInfo argumentInfoOf(const HostTensor& tensor) {
  return {.dtype = tensor.dtype(),
          .sizes = tensor.sizes(),
          .strides = tensor.strides(),
          .has_storage = tensor.defined(),
          .description = tensor.describe()};
}

void validateAndBindArguments(const Fusion& fusion, const std::vector<ArgumentInfo>& arguments,
                              std::string_view caller, ExpressionEvaluator& scalars) {
  eval_detail::ArgumentBinder binder(fusion, arguments, caller, scalars);
  binder.checkKinds();
  binder.bindScalars();
  binder.bindSizes();
  binder.checkLayouts();
}

}  // namespace braze
