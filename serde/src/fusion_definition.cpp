// Fusion definition files: the writer, and the file functions. The reader is
// fusion_definition_replay.cpp.
//
// Each expression is written as the arguments of the op builder that makes it, so that the
// reader can make it again through that builder. For most ops these are the Expr's inputs;
// ops whose output extents are arguments of their builder (expand, reshape, full, iota) add
// those extents, and a slice is written with the bounds the user gave, which the Expr only
// holds normalized:
//
//   x[1:] on T0: float32[i0{s0}]      Expr:    T1 = slice(T0, s1, 1), s1 = minimum(1, s0)
//                                      written: slice(T0, 1, <absent>, 1)

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <unordered_set>

#include "braze/ir/structural_hash.h"
#include "braze/ops/slice_bounds.h"
#include "braze/plugin/sha256.h"
#include "braze/serde/fusion_definition.h"
#include "braze/serde/fusion_definition_generated.h"
#include "entry_files.h"
#include "fusion_definition_values.h"

namespace braze::serde {

namespace {

// Whether `tv`'s loop domain has a DIDx or DIDy axis (a sharding not yet taken).
bool hasDeviceAxis(const TensorView& tv) {
  for (const IterDomain* id : tv.loop()) {
    if (id->parallelType() == ParallelType::DIDx || id->parallelType() == ParallelType::DIDy)
      return true;
  }
  return false;
}

using detail::ValueTable;

// One builder argument: a value of the fusion, a constant the fusion does not hold (a slice
// bound recomputed here), or absent (val and constant both empty).
struct Argument {
  const Val* val = nullptr;
  std::optional<ScalarValue> constant;
  DataType dtype = DataType::Index;
};

Argument absent() {
  return {};
}
Argument of(const Val* val) {
  return {val, std::nullopt, val->dtype()};
}
Argument indexConstant(int64_t value) {
  return {nullptr, value, DataType::Index};
}

std::string cannotSave(const Expr* expr, std::string_view why) {
  return "op " + std::string(toString(expr->op())) + " cannot be saved yet: " + std::string(why);
}

// The bound the user passed to slice, from the bound slice normalized (see normalizeBound in
// core/src/ops/slice.cpp), or nullopt when the bound has another form.
std::optional<Argument> userBound(const Scalar* bound, const Scalar* extent) {
  if (bound->isConstant()) return of(bound);
  const Expr* def = bound->definition();
  if (def == nullptr || def->inputs().size() != 2) return std::nullopt;
  const Val* a = def->input(0);
  const Val* b = def->input(1);
  if (def->op() == OpKind::Minimum && b == extent) {
    // minimum(c, extent) for a constant c > 0, or minimum(maximum(where(b < 0, b + extent, b),
    // 0), extent) for a symbolic b.
    if (a->isA<Scalar>() && a->as<Scalar>()->isConstant()) return of(a);
    const Expr* clamp_low = a->definition();
    if (clamp_low == nullptr || clamp_low->op() != OpKind::Maximum) return std::nullopt;
    const Expr* shifted = clamp_low->input(0)->definition();
    if (shifted == nullptr || shifted->op() != OpKind::Where) return std::nullopt;
    return of(shifted->input(2));
  }
  if (def->op() == OpKind::Maximum) {
    // maximum(extent + c, 0) for a constant c < 0.
    const Expr* sum = a->definition();
    if (sum == nullptr || sum->op() != OpKind::Add || sum->input(0) != extent) return std::nullopt;
    return of(sum->input(1));
  }
  return std::nullopt;
}

const Scalar* scalarOrNull(const Val* val) {
  return val->dynCast<Scalar>();
}

// start, stop (absent when none) and step of slice dim `dim`, as the user passed them.
std::vector<Argument> sliceDimArguments(const Expr* expr, size_t dim) {
  const auto* x = expr->input(0)->as<TensorView>();
  const auto* y = expr->output(0)->as<TensorView>();
  const Scalar* extent = x->logicalNoReductions().at(dim)->logicalExtent();
  const Scalar* start = scalarOrNull(expr->input(1 + 2 * dim));
  const Scalar* step = scalarOrNull(expr->input(2 + 2 * dim));
  const Scalar* count = y->logicalNoReductions().at(dim)->logicalExtent();
  auto fail = [&](std::string_view what) -> std::vector<Argument> {
    throw Error(cannotSave(expr, "the " + std::string(what) + " of dim " + std::to_string(dim) +
                                     " is not in the form slice() gives it"));
  };
  if (start == nullptr || step == nullptr || !step->constantInt()) return fail("step");
  const int64_t by = *step->constantInt();
  std::optional<Argument> user_start = userBound(start, extent);
  if (!user_start) return fail("start");
  // count = length (step 1) or ceil_div(length, step).
  const Scalar* length = count;
  if (by != 1) {
    const Expr* def = count->definition();
    if (count->isConstant()) {
      length = nullptr;
    } else if (def != nullptr && def->op() == OpKind::CeilDiv) {
      length = scalarOrNull(def->input(0));
    } else {
      return fail("length");
    }
  }
  std::vector<Argument> arguments{*user_start, absent(), of(step)};
  const std::optional<int64_t> begin = start->constantInt();
  if (length == nullptr) {
    // A constant count with a step: any stop that gives it; the one just past the last element.
    if (!begin) return fail("stop");
    arguments[1] = indexConstant(*begin + (*count->constantInt() - 1) * by + 1);
    if (*count->constantInt() == 0) arguments[1] = indexConstant(*begin);
    return arguments;
  }
  if (length == extent && begin == 0) return arguments;  // no stop
  if (const Expr* def = length->definition(); def != nullptr && def->op() == OpKind::Sub &&
                                              def->input(0) == extent && def->input(1) == start)
    return arguments;  // no stop
  if (begin && length->constantInt()) {
    arguments[1] = indexConstant(*begin + *length->constantInt());
    return arguments;
  }
  if (begin == 0) {
    std::optional<Argument> stop = userBound(length, extent);
    if (!stop) return fail("stop");
    arguments[1] = *stop;
    return arguments;
  }
  // length = maximum(stop, start) - start: the stop is raised to the start.
  const Expr* def = length->definition();
  if (def == nullptr || def->op() != OpKind::Sub || def->input(1) != start) return fail("stop");
  const Expr* raised = def->input(0)->definition();
  if (raised == nullptr || raised->op() != OpKind::Maximum || raised->input(1) != start)
    return fail("stop");
  std::optional<Argument> stop = userBound(raised->input(0)->as<Scalar>(), extent);
  if (!stop) return fail("stop");
  arguments[1] = *stop;
  return arguments;
}

// Whether the slice `expr` is written with its normalized bounds and the attribute
// manual_normalization: when some dim's bounds are not in the form slice() normalizes a
// user's bounds into (a slice built with manual_normalization, as repr writes symbolic ones).
bool writtenNormalized(const Expr* expr) {
  const size_t rank = (expr->inputs().size() - 1) / 2;
  try {
    for (size_t dim = 0; dim < rank; ++dim) sliceDimArguments(expr, dim);
  } catch (const Error&) {
    return true;
  }
  return false;
}

// start, stop and step of slice dim `dim`, normalized: what slice(..., manual_normalization)
// takes to build the same count.
std::vector<Argument> normalizedSliceArguments(const Expr* expr, size_t dim) {
  const std::optional<SliceStop> stop = normalizedSliceStop(*expr, dim);
  if (!stop) {
    throw Error(cannotSave(expr, "the count of dim " + std::to_string(dim) +
                                     " is not ceil_div(stop - start, step) of its bounds"));
  }
  return {of(expr->input(1 + 2 * dim)),
          stop->value != nullptr ? of(stop->value) : indexConstant(stop->constant),
          of(expr->input(2 + 2 * dim))};
}

// What the builder of `expr` takes (the layout fusion_definition_replay.cpp reads);
// `normalized_slice`: a slice written with its normalized bounds (writtenNormalized).
std::vector<Argument> builderArguments(const Expr* expr, bool normalized_slice) {
  std::vector<Argument> arguments;
  const auto extentsOf = [&](const Val* val) {
    for (const IterDomain* id : val->as<TensorView>()->logical())
      arguments.push_back(of(id->extent()));
  };
  switch (expr->op()) {
    case OpKind::Expand: {
      // -1 (absent) keeps a dim; a plain broadcast dim given an expanded extent takes it.
      arguments.push_back(of(expr->input(0)));
      const auto in = expr->input(0)->as<TensorView>()->logicalNoReductions();
      const auto out = expr->output(0)->as<TensorView>()->logicalNoReductions();
      for (size_t i = 0; i < out.size() && i < in.size(); ++i) {
        const bool plain = in[i]->isBroadcast() && !in[i]->hasExpandedExtent();
        arguments.push_back(plain && out[i]->hasExpandedExtent() ? of(out[i]->expandedExtent())
                                                                 : absent());
      }
      return arguments;
    }
    case OpKind::Reshape:
      arguments.push_back(of(expr->input(0)));
      extentsOf(expr->output(0));
      return arguments;
    case OpKind::Full:
      arguments.push_back(of(expr->input(0)));
      extentsOf(expr->output(0));
      return arguments;
    case OpKind::Iota:
      arguments = {of(expr->input(0)), of(expr->input(1))};
      extentsOf(expr->output(0));
      return arguments;
    case OpKind::Uniform:
    case OpKind::Normal:
      for (const Val* input : expr->inputs()) arguments.push_back(of(input));
      extentsOf(expr->output(0));
      return arguments;
    case OpKind::Slice: {
      arguments.push_back(of(expr->input(0)));
      const size_t rank = (expr->inputs().size() - 1) / 2;
      for (size_t dim = 0; dim < rank; ++dim) {
        for (Argument& argument :
             normalized_slice ? normalizedSliceArguments(expr, dim) : sliceDimArguments(expr, dim))
          arguments.push_back(std::move(argument));
      }
      return arguments;
    }
    case OpKind::Split:
    case OpKind::Merge:
      throw Error(cannotSave(expr, "IterDomain transforms belong to a schedule"));
    default:
      for (const Val* input : expr->inputs()) arguments.push_back(of(input));
      return arguments;
  }
}

fb::ValueCategory categoryOf(const ScalarValue& value) {
  if (std::holds_alternative<bool>(value)) return fb::ValueCategory::Bool;
  if (std::holds_alternative<int64_t>(value)) return fb::ValueCategory::Int;
  return fb::ValueCategory::Double;
}

class Writer {
 public:
  explicit Writer(const Fusion& fusion) : fusion_(fusion) {}

  std::vector<uint8_t> write() {
    std::vector<flatbuffers::Offset<fb::Input>> inputs;
    for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
      inputs.push_back(writeInput(fusion_.inputs()[i], i));
    }
    for (const Expr* expr : fusion_.exprs()) writeExpr(expr);
    std::vector<int64_t> outputs;
    for (size_t i = 0; i < fusion_.outputs().size(); ++i) {
      const int64_t number = values_.find(fusion_.outputs()[i]);
      BRAZE_USER_CHECK(number >= 0)
          << "output " << i << " (" << fusion_.outputs()[i]->name()
          << ") cannot be saved: it is neither an input nor computed by an expression";
      outputs.push_back(number);
    }
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> aliases;
    if (!fusion_.outputAliases().empty()) {
      std::vector<int64_t> positions;
      for (const Val* output : fusion_.outputs()) {
        const Val* input = fusion_.aliasedInput(output);
        positions.push_back(input == nullptr ? -1 : fusion_.inputIndex(input));
      }
      aliases = builder_.CreateVector(positions);
    }
    std::vector<flatbuffers::Offset<fb::StreamAxis>> stream_axes;
    for (const TensorView* tv : fusion_.allTensors()) {
      // A definition saved without its meshes would load as a different, unsharded one.
      BRAZE_USER_CHECK(!tv->sharding() && !hasDeviceAxis(*tv))
          << tv->name() << " is placed on a device mesh"
          << (tv->sharding() ? " (" + tv->sharding()->toString() + ")" : std::string())
          << "; saved fusion definitions do not hold shardings yet, so a sharded definition "
             "cannot be saved";
      const int64_t number = values_.find(tv);
      if (!tv->streamAxis() || number < 0) continue;
      const StreamAxis& axis = *tv->streamAxis();
      stream_axes.push_back(
          fb::CreateStreamAxis(builder_, number, axis.axis, axis.by_count, axis.factor));
    }
    const std::string canonical = canonicalForm(fusion_);
    const auto bytes =
        std::span(reinterpret_cast<const uint8_t*>(canonical.data()), canonical.size());
    const auto definition = fb::CreateFusionDefinition(
        builder_, static_cast<uint32_t>(fb::FusionDefinitionVersion::Current),
        builder_.CreateString("braze " BRAZE_VERSION_STRING), builder_.CreateVector(inputs),
        builder_.CreateVector(exprs_), builder_.CreateVector(outputs),
        builder_.CreateString(sha256Hex(bytes)), aliases,
        stream_axes.empty() ? 0 : builder_.CreateVector(stream_axes));
    fb::FinishFusionDefinitionBuffer(builder_, definition);
    return {builder_.GetBufferPointer(), builder_.GetBufferPointer() + builder_.GetSize()};
  }

 private:
  flatbuffers::Offset<fb::Input> writeInput(Val* input, size_t position) {
    values_.add(input);
    const auto* tv = input->dynCast<TensorView>();
    if (tv == nullptr) {
      BRAZE_USER_CHECK(input->isA<Scalar>() && !input->as<Scalar>()->isConstant())
          << "input " << position << " (" << input->name()
          << ") cannot be saved: inputs are tensors or symbolic scalars";
      return fb::CreateInput(builder_, 0, builder_.CreateString(toString(input->dtype())));
    }
    std::vector<int64_t> sizes;
    for (const IterDomain* id : tv->logical()) sizes.push_back(inputSize(tv, id, position));
    std::vector<fb::Contiguity> contiguity;
    for (const std::optional<bool>& contiguous : tv->contiguity()) {
      contiguity.push_back(!contiguous
                               ? fb::Contiguity::None
                               : (*contiguous ? fb::Contiguity::True : fb::Contiguity::False));
    }
    const auto spec = fb::CreateTensorInput(
        builder_, builder_.CreateString(toString(tv->dtype())), builder_.CreateVector(sizes),
        builder_.CreateVector(contiguity), builder_.CreateVector(tv->allocationOrder()));
    return fb::CreateInput(builder_, spec);
  }

  // TensorSpec's size of one dim: what makeInputTensor makes of -1, 1 and fixed sizes.
  static int64_t inputSize(const TensorView* tv, const IterDomain* id, size_t position) {
    const std::optional<int64_t> constant = id->extent()->constantInt();
    if (id->isBroadcast() && !id->hasExpandedExtent() && constant == 1) return 1;
    if (id->isIteration() && !constant && id->extent()->definition() == nullptr) return -1;
    if (id->isIteration() && constant && *constant != 1) return *constant;
    throw Error("input " + std::to_string(position) + " (" + tv->name() +
                ") cannot be saved: dim " + id->name() +
                " is not one makeInputTensor makes (a size -1, 1 or a fixed size other than 1)");
  }

  void writeExpr(const Expr* expr) {
    if (!written_.insert(expr).second) return;
    const bool numbered = std::all_of(expr->outputs().begin(), expr->outputs().end(),
                                      [&](const Val* out) { return values_.find(out) >= 0; });
    // A scalar computed inside a builder (an extent) is numbered with its tensor already.
    if (numbered && !expr->outputs().empty()) return;
    const size_t position = exprs_.size();
    // Decided once: it tries the user's form of every dim.
    const bool normalized_slice = expr->op() == OpKind::Slice && writtenNormalized(expr);
    std::vector<Argument> arguments;
    try {
      arguments = builderArguments(expr, normalized_slice);
    } catch (const Error& error) {
      throw Error("expr " + std::to_string(position) + ": " + error.what());
    }
    // Scalars an argument needs (extents computed from others) are written first.
    for (const Argument& argument : arguments) {
      if (argument.val == nullptr || values_.find(argument.val) >= 0) continue;
      const auto* scalar = argument.val->dynCast<Scalar>();
      if (scalar != nullptr && scalar->isConstant()) continue;
      BRAZE_INTERNAL_CHECK(argument.val->definition() != nullptr)
          << "saving a fusion definition: " << argument.val->name() << ", an argument of "
          << expr->op() << ", is neither an input nor computed";
      writeExpr(argument.val->definition());
      BRAZE_INTERNAL_CHECK(values_.find(argument.val) >= 0)
          << "saving a fusion definition: " << argument.val->name() << " was not numbered";
    }
    std::vector<flatbuffers::Offset<fb::Ref>> refs;
    for (const Argument& argument : arguments) refs.push_back(writeRef(argument));
    std::vector<flatbuffers::Offset<fb::Attribute>> attributes;
    for (const Attribute& attribute : expr->attributes())
      attributes.push_back(writeAttribute(attribute));
    if (normalized_slice)
      attributes.push_back(writeAttribute(Attribute{"manual_normalization", true}));
    std::vector<flatbuffers::Offset<flatbuffers::String>> dtypes;
    for (const Val* output : expr->outputs())
      dtypes.push_back(builder_.CreateString(toString(output->dtype())));
    exprs_.push_back(fb::CreateExpr(builder_, builder_.CreateString(toString(expr->op())),
                                    builder_.CreateVector(refs), builder_.CreateVector(attributes),
                                    builder_.CreateVector(dtypes)));
    for (Val* output : expr->outputs()) values_.add(output);
  }

  flatbuffers::Offset<fb::Ref> writeRef(const Argument& argument) {
    std::optional<ScalarValue> constant = argument.constant;
    if (argument.val != nullptr) {
      const auto* scalar = argument.val->dynCast<Scalar>();
      if (scalar != nullptr && scalar->isConstant()) {
        constant = *scalar->value();
      } else {
        return fb::CreateRef(builder_, values_.find(argument.val));
      }
    }
    if (!constant) return fb::CreateRef(builder_, -1);
    const auto dtype = builder_.CreateString(toString(argument.dtype));
    const ScalarValue& value = *constant;
    const auto stored =
        fb::CreateConstant(builder_, dtype, categoryOf(value),
                           std::holds_alternative<bool>(value) && std::get<bool>(value),
                           std::holds_alternative<int64_t>(value) ? std::get<int64_t>(value) : 0,
                           std::holds_alternative<double>(value) ? std::get<double>(value) : 0.0);
    return fb::CreateRef(builder_, -1, stored);
  }

  flatbuffers::Offset<fb::Attribute> writeAttribute(const Attribute& attribute) {
    const auto name = builder_.CreateString(attribute.name);
    return std::visit(
        [&](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>) {
            const auto text = builder_.CreateString(value);
            return fb::CreateAttribute(builder_, name, fb::AttributeType::String, false, 0, 0.0,
                                       text);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            return fb::CreateAttribute(builder_, name, fb::AttributeType::Ints, false, 0, 0.0, 0,
                                       builder_.CreateVector(value));
          } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
            const std::vector<uint8_t> bits(value.begin(), value.end());
            return fb::CreateAttribute(builder_, name, fb::AttributeType::Bools, false, 0, 0.0, 0,
                                       0, builder_.CreateVector(bits));
          } else if constexpr (std::is_same_v<T, bool>) {
            return fb::CreateAttribute(builder_, name, fb::AttributeType::Bool, value);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            return fb::CreateAttribute(builder_, name, fb::AttributeType::Int, false, value);
          } else {
            return fb::CreateAttribute(builder_, name, fb::AttributeType::Double, false, 0, value);
          }
        },
        attribute.value);
  }

  const Fusion& fusion_;
  flatbuffers::FlatBufferBuilder builder_;
  ValueTable values_;
  std::unordered_set<const Expr*> written_;
  std::vector<flatbuffers::Offset<fb::Expr>> exprs_;
};

}  // namespace

std::vector<uint8_t> encodeFusionDefinition(const Fusion& fusion) {
  std::vector<uint8_t> bytes;
  try {
    bytes = Writer(fusion).write();
  } catch (const Error& error) {
    throw Error(std::string("saving a fusion definition: ") + error.what());
  }
  // A definition that would not load again is refused now, when the fusion is at hand.
  try {
    decodeFusionDefinition(bytes, "the definition being saved");
  } catch (const Error& error) {
    throw Error(std::string("saving a fusion definition: it would not load again, so it is not "
                            "written (an op the op builders cannot rebuild exactly cannot be "
                            "saved yet): ") +
                error.what());
  }
  return bytes;
}

void saveFusionDefinition(const Fusion& fusion, const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = encodeFusionDefinition(fusion);
  BRAZE_USER_CHECK(path.has_filename())
      << "saveFusionDefinition: '" << path.string() << "' names no file; give a path such as "
      << "defs/rms_norm.bzf";
  std::filesystem::path folder = path.parent_path();
  if (folder.empty()) folder = ".";
  if (std::optional<std::string> problem =
          detail::writeAtomically(folder, path.filename().string(), bytes)) {
    BRAZE_THROW() << "saveFusionDefinition: cannot write " << path.string() << ": " << *problem;
  }
}

std::unique_ptr<Fusion> loadFusionDefinition(const std::filesystem::path& path) {
  std::string problem;
  std::optional<std::vector<uint8_t>> bytes =
      detail::readCapped(path, detail::kMaxDefinitionBytes, problem);
  BRAZE_USER_CHECK(bytes.has_value())
      << "fusion definition " << path.string() << ": cannot read it: " << problem;
  return decodeFusionDefinition(*bytes, path.string());
}

}  // namespace braze::serde
