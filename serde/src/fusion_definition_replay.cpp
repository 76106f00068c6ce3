// Fusion definition files: the reader. A definition is rebuilt by replaying each stored
// expression through the op builder that made it (core/include/braze/ops), so every shape,
// dtype, axis and permutation is validated as if a user had called the builder; nothing in the
// file becomes IR directly. Each builder's arguments, as fusion_definition.cpp writes them:
//
//   unary, binary, ternary ops  the Expr's inputs (cast: its output dtype is the target;
//                               gelu: attribute "approximate")
//   sum, prod, max, min         x, attribute "axes" (sum and prod: output dtype as dtype=)
//   welford                     x, attribute "axes"
//   broadcast, squeeze          x, attribute "flags"; permute: x, attribute "perm"
//   expand                      x, then per dim its expanded size, or absent for -1
//   reshape                     x, then the output's extents
//   slice                       x, then per dim start, stop (absent: to the end), step;
//                               attribute "manual_normalization" when the bounds are the
//                               normalized ones (0 <= start <= stop <= size)
//   pad                         x, fill value, then per dim (in dim order) left, right
//   cat                         the tensors, attribute "dim"
//   select                      x, index; index_select (any index rank: take), gather: x,
//                               index tensor; "dim"
//   scatter                     x, index tensor, src; "dim"
//   full                        fill value, then the output's extents
//   iota                        start, step, length
//   uniform, normal             minval / mean, maxval / std, rng_seed, rng_offset, then the
//                               output's extents
//   matmul, linear              the operands (linear: x, weight [, bias])
//   set, segment_set            x (a copy)
//   stride_order                x, attribute "stride_order"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>

#include <cstring>

#include "braze/ir/structural_hash.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/reduction.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"
#include "braze/plugin/sha256.h"
#include "braze/serde/fusion_definition.h"
#include "braze/serde/fusion_definition_generated.h"
#include "fusion_definition_values.h"

namespace braze::serde {

namespace {

// The elements of a vector of 64-bit integers, copied out byte-wise: the flatbuffers verifier
// checks a vector's start to 4 bytes only, so a hostile file can misalign them.
std::vector<int64_t> int64s(const flatbuffers::Vector<int64_t>& values) {
  std::vector<int64_t> copied(values.size());
  if (!copied.empty()) std::memcpy(copied.data(), values.Data(), copied.size() * sizeof(int64_t));
  for (int64_t& value : copied) value = flatbuffers::EndianScalar(value);
  return copied;
}

using detail::kMaxDefinitionRank;
using detail::kMaxDefinitionSize;
using UnaryFn = Val* (*)(Operand);
using BinaryFn = Val* (*)(Operand, Operand);
using TernaryFn = Val* (*)(Operand, Operand, Operand);

UnaryFn unaryBuilder(OpKind op) {
  switch (op) {
#define BRAZE_UNARY_CASE(kind, fn) \
  case OpKind::kind:               \
    return static_cast<UnaryFn>(&braze::fn);
    BRAZE_UNARY_CASE(Neg, neg)
    BRAZE_UNARY_CASE(Abs, abs)
    BRAZE_UNARY_CASE(Exp, exp)
    BRAZE_UNARY_CASE(Exp2, exp2)
    BRAZE_UNARY_CASE(Expm1, expm1)
    BRAZE_UNARY_CASE(Log, log)
    BRAZE_UNARY_CASE(Log2, log2)
    BRAZE_UNARY_CASE(Log1p, log1p)
    BRAZE_UNARY_CASE(Sqrt, sqrt)
    BRAZE_UNARY_CASE(Rsqrt, rsqrt)
    BRAZE_UNARY_CASE(Reciprocal, reciprocal)
    BRAZE_UNARY_CASE(Sin, sin)
    BRAZE_UNARY_CASE(Cos, cos)
    BRAZE_UNARY_CASE(Tan, tan)
    BRAZE_UNARY_CASE(Tanh, tanh)
    BRAZE_UNARY_CASE(Sigmoid, sigmoid)
    BRAZE_UNARY_CASE(Relu, relu)
    BRAZE_UNARY_CASE(Silu, silu)
    BRAZE_UNARY_CASE(Erf, erf)
    BRAZE_UNARY_CASE(Erfc, erfc)
    BRAZE_UNARY_CASE(Floor, floor)
    BRAZE_UNARY_CASE(Ceil, ceil)
    BRAZE_UNARY_CASE(Round, round)
    BRAZE_UNARY_CASE(Trunc, trunc)
    BRAZE_UNARY_CASE(Sign, sign)
    BRAZE_UNARY_CASE(IsNan, isnan)
    BRAZE_UNARY_CASE(IsInf, isinf)
    BRAZE_UNARY_CASE(IsFinite, isfinite)
    BRAZE_UNARY_CASE(Signbit, signbit)
    BRAZE_UNARY_CASE(LogicalNot, logical_not)
    BRAZE_UNARY_CASE(BitwiseNot, bitwise_not)
#undef BRAZE_UNARY_CASE
    default:
      return nullptr;
  }
}

BinaryFn binaryBuilder(OpKind op) {
  switch (op) {
#define BRAZE_BINARY_CASE(kind, fn) \
  case OpKind::kind:                \
    return static_cast<BinaryFn>(&braze::fn);
    BRAZE_BINARY_CASE(Add, add)
    BRAZE_BINARY_CASE(Sub, sub)
    BRAZE_BINARY_CASE(Mul, mul)
    BRAZE_BINARY_CASE(Div, div)
    BRAZE_BINARY_CASE(TrueDiv, truediv)
    BRAZE_BINARY_CASE(Remainder, remainder)
    BRAZE_BINARY_CASE(Fmod, fmod)
    BRAZE_BINARY_CASE(CeilDiv, ceil_div)
    BRAZE_BINARY_CASE(Pow, pow)
    BRAZE_BINARY_CASE(Maximum, maximum)
    BRAZE_BINARY_CASE(Minimum, minimum)
    BRAZE_BINARY_CASE(Atan2, atan2)
    BRAZE_BINARY_CASE(Gcd, gcd)
    BRAZE_BINARY_CASE(Nextafter, nextafter)
    BRAZE_BINARY_CASE(Eq, eq)
    BRAZE_BINARY_CASE(Ne, ne)
    BRAZE_BINARY_CASE(Lt, lt)
    BRAZE_BINARY_CASE(Le, le)
    BRAZE_BINARY_CASE(Gt, gt)
    BRAZE_BINARY_CASE(Ge, ge)
    BRAZE_BINARY_CASE(LogicalAnd, logical_and)
    BRAZE_BINARY_CASE(LogicalOr, logical_or)
    BRAZE_BINARY_CASE(LogicalXor, logical_xor)
    BRAZE_BINARY_CASE(BitwiseAnd, bitwise_and)
    BRAZE_BINARY_CASE(BitwiseOr, bitwise_or)
    BRAZE_BINARY_CASE(BitwiseXor, bitwise_xor)
    BRAZE_BINARY_CASE(LeftShift, left_shift)
    BRAZE_BINARY_CASE(RightShift, right_shift)
    BRAZE_BINARY_CASE(LogicalRightShift, logical_right_shift)
#undef BRAZE_BINARY_CASE
    default:
      return nullptr;
  }
}

TernaryFn ternaryBuilder(OpKind op) {
  switch (op) {
    case OpKind::Where:
      return static_cast<TernaryFn>(&braze::where);
    case OpKind::Clamp:
      return static_cast<TernaryFn>(&braze::clamp);
    case OpKind::Lerp:
      return static_cast<TernaryFn>(&braze::lerp);
    default:
      return nullptr;
  }
}

std::string text(const flatbuffers::String* value) {
  return value == nullptr ? std::string() : value->str();
}

// One resolved argument: a value of the fusion being rebuilt, a constant, or absent.
struct Argument {
  Val* val = nullptr;
  std::optional<ScalarValue> constant;
  DataType dtype = DataType::Index;
  bool present() const { return val != nullptr || constant.has_value(); }
};

class Replay {
 public:
  Replay(const fb::FusionDefinition& definition, std::string_view where)
      : definition_(definition), where_(where) {}

  std::unique_ptr<Fusion> run() {
    fusion_ = std::make_unique<Fusion>();
    const auto* inputs = definition_.inputs();
    const auto* exprs = definition_.exprs();
    const auto* outputs = definition_.outputs();
    if (inputs == nullptr || exprs == nullptr || outputs == nullptr ||
        definition_.canonical_sha256() == nullptr)
      fail("a required field (inputs, exprs, outputs or canonical_sha256) is missing");
    for (flatbuffers::uoffset_t i = 0; i < inputs->size(); ++i) {
      guarded("input " + std::to_string(i), [&] { addInput(inputs->Get(i)); });
    }
    for (flatbuffers::uoffset_t i = 0; i < exprs->size(); ++i) {
      const fb::Expr* expr = exprs->Get(i);
      const std::string op = expr->op() == nullptr ? std::string("?") : expr->op()->str();
      guarded(
          "expr " + std::to_string(i) + " of " + std::to_string(exprs->size()) + " (" + op + ")",
          [&] { replay(*expr); });
    }
    const std::vector<int64_t> output_values = int64s(*outputs);
    for (size_t i = 0; i < output_values.size(); ++i) {
      guarded("output " + std::to_string(i),
              [&] { fusion_->addOutput(valueAt(output_values[i], "the output")); });
    }
    if (const auto* aliases = definition_.output_aliases()) {
      const std::vector<int64_t> positions = int64s(*aliases);
      if (positions.size() != output_values.size())
        fail("output_aliases has " + std::to_string(positions.size()) + " entries for " +
             std::to_string(output_values.size()) + " outputs");
      for (size_t i = 0; i < positions.size(); ++i) {
        if (positions[i] < 0) continue;
        guarded("the alias of output " + std::to_string(i), [&] {
          if (positions[i] >= static_cast<int64_t>(fusion_->inputs().size()))
            fail("output " + std::to_string(i) + " is written into input " +
                 std::to_string(positions[i]) + ", which does not exist");
          fusion_->aliasOutputToInput(fusion_->outputs()[i],
                                      fusion_->inputs()[static_cast<size_t>(positions[i])]);
        });
      }
    }
    if (const auto* stream_axes = definition_.stream_axes()) {
      for (flatbuffers::uoffset_t i = 0; i < stream_axes->size(); ++i)
        guarded("stream axis " + std::to_string(i), [&] { addStreamAxis(stream_axes->Get(i)); });
    }
    const std::string canonical = canonicalForm(*fusion_);
    const std::string sha =
        sha256Hex(std::span(reinterpret_cast<const uint8_t*>(canonical.data()), canonical.size()));
    if (sha != text(definition_.canonical_sha256())) {
      fail("the rebuilt fusion is not the one that was saved (its canonical form hashes to " + sha +
           ", the file records " + text(definition_.canonical_sha256()) +
           "): the file is damaged, or was written by a Braze whose op builders build "
           "differently (" +
           text(definition_.braze_version()) + "); save the definition again with this Braze");
    }
    return std::move(fusion_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("fusion definition " + std::string(where_) + ": " + what);
  }

  // Runs `step`, turning any failure into an Error that names the file and `context`.
  template <typename Step>
  void guarded(const std::string& context, Step step) {
    try {
      step();
    } catch (const std::exception& error) {
      fail(context + ": " + error.what());
    }
  }

  Val* valueAt(int64_t number, std::string_view what) const {
    BRAZE_USER_CHECK(number >= 0 && number < values_.size())
        << what << " refers to value " << number << ", but only " << values_.size()
        << " values exist at this point (values are numbered as they are made; an expression "
           "may only use values made before it)";
    return values_.at(number);
  }

  static DataType parseDtype(const flatbuffers::String* name, std::string_view what) {
    BRAZE_USER_CHECK(name != nullptr) << what << " has no dtype";
    std::optional<DataType> dtype = parseDataType(name->str());
    BRAZE_USER_CHECK(dtype.has_value()) << what << " has unknown dtype '" << name->str() << "'";
    return *dtype;
  }

  void addStreamAxis(const fb::StreamAxis* entry) {
    BRAZE_USER_CHECK(entry != nullptr) << "the entry is missing";
    auto* tv = valueAt(entry->value(), "the streamed tensor")->dynCast<TensorView>();
    BRAZE_USER_CHECK(tv != nullptr) << "value " << entry->value() << " is not a tensor";
    BRAZE_USER_CHECK(entry->axis() >= 0 && entry->axis() < tv->nDims() && entry->factor() >= 1)
        << "axis " << entry->axis() << " in slices by " << entry->factor() << " is invalid for "
        << tv->name() << " of " << tv->nDims() << " dims";
    tv->setStreamAxis(StreamAxis{entry->axis(), entry->by_count(), entry->factor()});
  }

  void addInput(const fb::Input* input) {
    BRAZE_USER_CHECK(input != nullptr) << "the entry is missing";
    const fb::TensorInput* tensor = input->tensor();
    if (tensor == nullptr) {
      values_.add(makeInputScalar(*fusion_, parseDtype(input->scalar_dtype(), "the scalar")));
      return;
    }
    TensorSpec spec;
    spec.dtype = parseDtype(tensor->dtype(), "the tensor");
    BRAZE_USER_CHECK(tensor->sizes() != nullptr && tensor->contiguity() != nullptr &&
                     tensor->allocation_order() != nullptr)
        << "the tensor lacks its sizes, contiguity or allocation order";
    BRAZE_USER_CHECK(tensor->sizes()->size() <= kMaxDefinitionRank)
        << "rank " << tensor->sizes()->size() << " is above the largest Braze supports ("
        << kMaxDefinitionRank << ")";
    int64_t elements = 1;
    for (int64_t size : int64s(*tensor->sizes())) {
      BRAZE_USER_CHECK(size >= -1 && size <= kMaxDefinitionSize)
          << "size " << size << " is invalid (-1, 1 for a broadcast, or 0 .. " << kMaxDefinitionSize
          << ")";
      BRAZE_USER_CHECK(size < 0 || !__builtin_mul_overflow(elements, size, &elements))
          << "the fixed sizes multiply past 2^63 elements";
      spec.sizes.push_back(size);
    }
    for (fb::Contiguity contiguous : *tensor->contiguity()) {
      switch (contiguous) {
        case fb::Contiguity::False:
          spec.contiguity.emplace_back(false);
          break;
        case fb::Contiguity::True:
          spec.contiguity.emplace_back(true);
          break;
        case fb::Contiguity::None:
          spec.contiguity.emplace_back(std::nullopt);
          break;
        default:
          BRAZE_THROW() << "contiguity value " << static_cast<int>(contiguous) << " is unknown";
      }
    }
    spec.allocation_order = int64s(*tensor->allocation_order());
    values_.add(makeInputTensor(*fusion_, spec));
  }

  Argument resolve(const fb::Ref* ref, size_t position) {
    const std::string what = "argument " + std::to_string(position);
    BRAZE_USER_CHECK(ref != nullptr) << what << " is missing";
    if (ref->value() >= 0) return {valueAt(ref->value(), what), std::nullopt, DataType::Index};
    const fb::Constant* constant = ref->constant();
    if (constant == nullptr) return {};
    const DataType dtype = parseDtype(constant->dtype(), what);
    ScalarValue value = false;
    switch (constant->category()) {
      case fb::ValueCategory::Bool:
        BRAZE_USER_CHECK(isBoolean(dtype)) << what << ": a bool constant of dtype " << dtype;
        value = constant->bool_value();
        break;
      case fb::ValueCategory::Int:
        BRAZE_USER_CHECK(isIntegral(dtype)) << what << ": an integer constant of dtype " << dtype;
        value = constant->int_value();
        break;
      case fb::ValueCategory::Double:
        BRAZE_USER_CHECK(isFloatingPoint(dtype))
            << what << ": a floating constant of dtype " << dtype;
        value = constant->double_value();
        break;
      default:
        BRAZE_THROW() << what << ": constant category " << static_cast<int>(constant->category())
                      << " is unknown";
    }
    return {nullptr, value, dtype};
  }

  // A constant of its natural dtype goes in as a C++ literal would (a Python scalar in type
  // promotion); any other as a constant Scalar of its dtype.
  Operand operand(const Argument& argument, size_t position) {
    BRAZE_USER_CHECK(argument.present()) << "argument " << position << " is absent";
    if (argument.val != nullptr) return Operand(argument.val);
    if (naturalDataType(*argument.constant) == argument.dtype) {
      return std::visit([](auto v) { return Operand(v); }, *argument.constant);
    }
    return Operand(fusion_->constant(*argument.constant, argument.dtype));
  }

  // A size or bound: its magnitude is capped so that the builders' shape arithmetic stays far
  // from overflow.
  Operand sizeOperand(const Argument& argument, size_t position) {
    if (argument.constant && std::holds_alternative<int64_t>(*argument.constant)) {
      const int64_t value = std::get<int64_t>(*argument.constant);
      BRAZE_USER_CHECK(value >= -kMaxDefinitionSize && value <= kMaxDefinitionSize)
          << "argument " << position << " (a size) is " << value << ", beyond +-"
          << kMaxDefinitionSize;
    }
    return operand(argument, position);
  }

  TensorView* tensor(const Argument& argument, size_t position) {
    BRAZE_USER_CHECK(argument.val != nullptr && argument.val->isA<TensorView>())
        << "argument " << position << " must be a tensor";
    return argument.val->as<TensorView>();
  }

  template <typename T>
  const T& attribute(std::string_view name) const {
    for (const Attribute& attribute : attributes_) {
      if (attribute.name != name) continue;
      const T* typed = std::get_if<T>(&attribute.value);
      BRAZE_USER_CHECK(typed != nullptr) << "attribute '" << name << "' has the wrong type";
      return *typed;
    }
    BRAZE_THROW() << "attribute '" << name << "' is missing";
  }

  static Attribute readAttribute(const fb::Attribute* stored) {
    BRAZE_USER_CHECK(stored != nullptr && stored->name() != nullptr) << "an attribute has no name";
    Attribute attribute{stored->name()->str(), false};
    switch (stored->type()) {
      case fb::AttributeType::Bool:
        attribute.value = stored->bool_value();
        break;
      case fb::AttributeType::Int:
        attribute.value = stored->int_value();
        break;
      case fb::AttributeType::Double:
        attribute.value = stored->double_value();
        break;
      case fb::AttributeType::String:
        attribute.value = text(stored->string_value());
        break;
      case fb::AttributeType::Ints:
        BRAZE_USER_CHECK(stored->ints() != nullptr)
            << "attribute '" << attribute.name << "' has no values";
        attribute.value = int64s(*stored->ints());
        break;
      case fb::AttributeType::Bools:
        BRAZE_USER_CHECK(stored->bools() != nullptr)
            << "attribute '" << attribute.name << "' has no values";
        attribute.value = std::vector<bool>(stored->bools()->begin(), stored->bools()->end());
        break;
      default:
        BRAZE_THROW() << "attribute '" << attribute.name << "' has unknown type tag "
                      << static_cast<int>(stored->type());
    }
    return attribute;
  }

  void expectArguments(bool ok, std::string_view layout) const {
    BRAZE_USER_CHECK(ok) << arguments_.size() << " arguments, expected " << layout;
  }

  DataType outputDtype(size_t i) const {
    BRAZE_USER_CHECK(i < output_dtypes_.size()) << "output dtype " << i << " is missing";
    return output_dtypes_[i];
  }

  void replay(const fb::Expr& stored) {
    BRAZE_USER_CHECK(stored.op() != nullptr) << "the op name is missing";
    const std::optional<OpKind> op = parseOpKind(stored.op()->str());
    BRAZE_USER_CHECK(op.has_value()) << "unknown op '" << stored.op()->str()
                                     << "'; the file was written by a newer Braze or is damaged";
    arguments_.clear();
    attributes_.clear();
    output_dtypes_.clear();
    if (stored.arguments() != nullptr) {
      BRAZE_USER_CHECK(stored.arguments()->size() <= 4 * kMaxDefinitionRank + 2)
          << stored.arguments()->size() << " arguments are more than any op takes";
      for (flatbuffers::uoffset_t i = 0; i < stored.arguments()->size(); ++i)
        arguments_.push_back(resolve(stored.arguments()->Get(i), i));
    }
    if (stored.attributes() != nullptr) {
      for (const fb::Attribute* attribute : *stored.attributes())
        attributes_.push_back(readAttribute(attribute));
    }
    BRAZE_USER_CHECK(stored.output_dtypes() != nullptr) << "the output dtypes are missing";
    for (const flatbuffers::String* dtype : *stored.output_dtypes())
      output_dtypes_.push_back(parseDtype(dtype, "an output"));

    Val* first = build(*op);
    // The builder must have made exactly the recorded expression: same op, outputs, dtypes and
    // attributes (the canonical form check at the end covers everything else).
    const Expr* made = first == nullptr ? nullptr : first->definition();
    BRAZE_USER_CHECK(made != nullptr && made->op() == *op)
        << "the builder made "
        << (made == nullptr ? std::string("no expression") : std::string(toString(made->op())))
        << " from these arguments, not " << *op;
    BRAZE_USER_CHECK(made->outputs().size() == output_dtypes_.size())
        << "the builder made " << made->outputs().size() << " outputs, the file records "
        << output_dtypes_.size();
    for (size_t i = 0; i < output_dtypes_.size(); ++i) {
      BRAZE_USER_CHECK(made->output(i)->dtype() == output_dtypes_[i])
          << "output " << i << " has dtype " << made->output(i)->dtype()
          << " when rebuilt, the file records " << output_dtypes_[i];
    }
    // A slice's manual_normalization is an argument of its builder, not an Expr attribute.
    std::vector<Attribute> recorded = attributes_;
    if (made->op() == OpKind::Slice) {
      std::erase_if(recorded, [](const Attribute& a) { return a.name == "manual_normalization"; });
    }
    BRAZE_USER_CHECK(made->attributes() == recorded)
        << "the rebuilt expression's attributes differ from the recorded ones";
    for (Val* output : made->outputs()) values_.add(output);
  }

  // Calls the builder of `op`; returns its (first) output.
  Val* build(OpKind op) {
    const size_t n = arguments_.size();
    auto arg = [&](size_t i) { return operand(arguments_[i], i); };
    if (UnaryFn unary = unaryBuilder(op)) {
      expectArguments(n == 1, "1");
      return unary(arg(0));
    }
    if (BinaryFn binary = binaryBuilder(op)) {
      expectArguments(n == 2, "2");
      return binary(arg(0), arg(1));
    }
    if (TernaryFn ternary = ternaryBuilder(op)) {
      expectArguments(n == 3, "3");
      return ternary(arg(0), arg(1), arg(2));
    }
    switch (op) {
      case OpKind::Gelu: {
        expectArguments(n == 1, "1");
        const std::string& approximate = attribute<std::string>("approximate");
        BRAZE_USER_CHECK(approximate == "none" || approximate == "tanh")
            << "gelu approximation '" << approximate << "' is not \"none\" or \"tanh\"";
        return gelu(arg(0),
                    approximate == "tanh" ? GeluApproximation::Tanh : GeluApproximation::None);
      }
      case OpKind::Cast:
        expectArguments(n == 1, "1");
        return cast(arg(0), outputDtype(0));
      case OpKind::Addcmul:
        expectArguments(n == 4, "4 (x, t1, t2, value)");
        return addcmul(arg(0), arg(1), arg(2), arg(3));
      case OpKind::Sum:
      case OpKind::Prod:
      case OpKind::Max:
      case OpKind::Min:
      case OpKind::Welford:
        return buildReduction(op);
      case OpKind::Cumsum:
      case OpKind::Cumprod:
      case OpKind::Cummax:
      case OpKind::Cummin:
        return buildScan(op);
      default:
        return buildShape(op);
    }
  }

  Val* buildReduction(OpKind op) {
    expectArguments(arguments_.size() == 1, "1 (x)");
    TensorView* x = tensor(arguments_[0], 0);
    const std::vector<int64_t>& axes = attribute<std::vector<int64_t>>("axes");
    // An empty list reduces every dim, which the recorded axes would then not say.
    BRAZE_USER_CHECK(!axes.empty()) << "the reduction has no axes";
    switch (op) {
      case OpKind::Sum:
        return sum(x, axes, false, outputDtype(0));
      case OpKind::Prod:
        return prod(x, axes, false, outputDtype(0));
      case OpKind::Max:
        return braze::max(x, axes);
      case OpKind::Min:
        return braze::min(x, axes);
      default:
        return welford(x, axes).avg;
    }
  }

  // The recorded scan reads and writes one dtype (its builder's casts are recorded apart).
  Val* buildScan(OpKind op) {
    expectArguments(arguments_.size() == 1, "1 (x)");
    TensorView* x = tensor(arguments_[0], 0);
    const int64_t dim = attribute<int64_t>("dim");
    switch (op) {
      case OpKind::Cumsum:
        return cumsum(x, dim, outputDtype(0));
      case OpKind::Cumprod:
        return cumprod(x, dim, outputDtype(0));
      case OpKind::Cummax:
        return cummax(x, dim);
      default:
        return cummin(x, dim);
    }
  }

  Val* buildShape(OpKind op) {
    const size_t n = arguments_.size();
    auto sizes = [&](size_t from) {
      std::vector<Operand> result;
      for (size_t i = from; i < n; ++i) result.push_back(sizeOperand(arguments_[i], i));
      return result;
    };
    switch (op) {
      case OpKind::Broadcast:
        expectArguments(n == 1, "1 (x)");
        return broadcast(tensor(arguments_[0], 0), attribute<std::vector<bool>>("flags"));
      case OpKind::Expand: {
        expectArguments(n >= 1, "x and one size per dim");
        std::vector<Operand> shape;
        for (size_t i = 1; i < n; ++i) {
          shape.push_back(arguments_[i].present() ? sizeOperand(arguments_[i], i)
                                                  : Operand(int64_t{-1}));
        }
        return expand(tensor(arguments_[0], 0), shape);
      }
      case OpKind::Reshape: {
        expectArguments(n >= 1, "x and the output's extents");
        TensorView* x = tensor(arguments_[0], 0);
        checkElementCount(x, 1);
        return reshape(x, sizes(1));
      }
      case OpKind::Set:
        expectArguments(n == 1, "1 (x)");
        return set(tensor(arguments_[0], 0));
      case OpKind::SegmentSet:
        expectArguments(n == 1, "1 (x)");
        return segment_set(tensor(arguments_[0], 0));
      case OpKind::StrideOrder:
        expectArguments(n == 1, "1 (x)");
        return stride_order(tensor(arguments_[0], 0),
                            attribute<std::vector<int64_t>>("stride_order"));
      case OpKind::Permute:
        expectArguments(n == 1, "1 (x)");
        return permute(tensor(arguments_[0], 0), attribute<std::vector<int64_t>>("perm"));
      case OpKind::Squeeze: {
        expectArguments(n == 1, "1 (x)");
        const std::vector<bool>& flags = attribute<std::vector<bool>>("flags");
        std::vector<int64_t> dims;
        for (size_t i = 0; i < flags.size(); ++i)
          if (flags[i]) dims.push_back(static_cast<int64_t>(i));
        TensorView* x = tensor(arguments_[0], 0);
        BRAZE_USER_CHECK(static_cast<int64_t>(flags.size()) == x->rank())
            << "squeeze flags has " << flags.size() << " entries for a tensor of rank "
            << x->rank();
        return squeeze(x, dims);
      }
      case OpKind::Slice: {
        expectArguments(n >= 1 && (n - 1) % 3 == 0, "x and (start, stop, step) per dim");
        std::vector<SliceRange> ranges;
        for (size_t i = 1; i < n; i += 3) {
          SliceRange range{sizeOperand(arguments_[i], i), std::nullopt,
                           sizeOperand(arguments_[i + 2], i + 2)};
          if (arguments_[i + 1].present()) range.stop = sizeOperand(arguments_[i + 1], i + 1);
          ranges.push_back(std::move(range));
        }
        const bool normalized =
            std::any_of(attributes_.begin(), attributes_.end(),
                        [](const Attribute& a) { return a.name == "manual_normalization"; });
        return slice(tensor(arguments_[0], 0), ranges,
                     normalized && attribute<bool>("manual_normalization"));
      }
      case OpKind::Pad: {
        expectArguments(n >= 2 && n % 2 == 0, "x, the fill value and (left, right) per dim");
        TensorView* x = tensor(arguments_[0], 0);
        const auto pairs = static_cast<int64_t>((n - 2) / 2);
        BRAZE_USER_CHECK(pairs == x->rank())
            << pairs << " (left, right) pairs for a tensor of rank " << x->rank();
        // pad() takes pairs from the last dim backwards; the file holds them in dim order.
        std::vector<Operand> widths;
        for (int64_t dim = pairs - 1; dim >= 0; --dim) {
          const auto left = static_cast<size_t>(2 + 2 * dim);
          widths.push_back(sizeOperand(arguments_[left], left));
          widths.push_back(sizeOperand(arguments_[left + 1], left + 1));
        }
        return pad(x, widths, operand(arguments_[1], 1));
      }
      case OpKind::Cat: {
        expectArguments(n >= 1, "at least 1 tensor");
        std::vector<TensorView*> xs;
        for (size_t i = 0; i < n; ++i) xs.push_back(tensor(arguments_[i], i));
        return cat(xs, attribute<int64_t>("dim"));
      }
      case OpKind::Select:
        expectArguments(n == 2, "2 (x, index)");
        return select(tensor(arguments_[0], 0), attribute<int64_t>("dim"),
                      operand(arguments_[1], 1));
      case OpKind::IndexSelect:
        // take is index_select with an index of any rank (embedding_fwd makes those).
        expectArguments(n == 2, "2 (x, index)");
        return take(tensor(arguments_[0], 0), attribute<int64_t>("dim"), tensor(arguments_[1], 1));
      case OpKind::Gather:
        expectArguments(n == 2, "2 (x, index)");
        return gather(tensor(arguments_[0], 0), attribute<int64_t>("dim"),
                      tensor(arguments_[1], 1));
      case OpKind::Scatter:
        expectArguments(n == 3, "3 (x, index, src)");
        return scatter(tensor(arguments_[0], 0), attribute<int64_t>("dim"),
                       tensor(arguments_[1], 1), tensor(arguments_[2], 2));
      case OpKind::Full:
        expectArguments(n >= 1, "the fill value and the output's extents");
        return full(*fusion_, sizes(1), operand(arguments_[0], 0), outputDtype(0));
      case OpKind::Iota:
        expectArguments(n == 3, "3 (start, step, length)");
        return iota(*fusion_, sizeOperand(arguments_[2], 2), operand(arguments_[0], 0),
                    operand(arguments_[1], 1), outputDtype(0));
      case OpKind::Uniform:
        expectArguments(n >= 4, "minval, maxval, rng_seed, rng_offset and the output's extents");
        return uniform(*fusion_, sizes(4), operand(arguments_[0], 0), operand(arguments_[1], 1),
                       outputDtype(0), operand(arguments_[2], 2), operand(arguments_[3], 3));
      case OpKind::Normal:
        expectArguments(n >= 4, "mean, std, rng_seed, rng_offset and the output's extents");
        return normal(*fusion_, sizes(4), operand(arguments_[0], 0), operand(arguments_[1], 1),
                      outputDtype(0), operand(arguments_[2], 2), operand(arguments_[3], 3));
      case OpKind::Matmul:
        expectArguments(n == 2, "2 (a, b)");
        return matmul(tensor(arguments_[0], 0), tensor(arguments_[1], 1));
      case OpKind::Linear:
        expectArguments(n == 2 || n == 3, "2 or 3 (x, weight [, bias])");
        return linear(tensor(arguments_[0], 0), tensor(arguments_[1], 1),
                      n == 3 ? tensor(arguments_[2], 2) : nullptr);
      default:
        BRAZE_THROW() << "op " << op << " cannot be rebuilt from a definition (only scheduling "
                      << "makes it)";
    }
  }

  // reshape multiplies fixed extents together; refuse products past int64 first.
  void checkElementCount(const TensorView* x, size_t first_size) const {
    int64_t elements = 1;
    for (const IterDomain* id : x->logicalNoReductions()) {
      const std::optional<int64_t> size = id->logicalExtent()->constantInt();
      BRAZE_USER_CHECK(!size || (*size >= 0 && !__builtin_mul_overflow(elements, *size, &elements)))
          << "the input's fixed sizes multiply past 2^63 elements";
    }
    elements = 1;
    for (size_t i = first_size; i < arguments_.size(); ++i) {
      const std::optional<ScalarValue>& size = arguments_[i].constant;
      if (!size || !std::holds_alternative<int64_t>(*size)) continue;
      const int64_t value = std::get<int64_t>(*size);
      BRAZE_USER_CHECK(value < 0 || !__builtin_mul_overflow(elements, value, &elements))
          << "the fixed sizes multiply past 2^63 elements";
    }
  }

  const fb::FusionDefinition& definition_;
  std::string_view where_;
  std::unique_ptr<Fusion> fusion_;
  detail::ValueTable values_;
  std::vector<Argument> arguments_;
  std::vector<Attribute> attributes_;
  std::vector<DataType> output_dtypes_;
};

}  // namespace

std::unique_ptr<Fusion> decodeFusionDefinition(std::span<const uint8_t> bytes,
                                               std::string_view where) {
  const auto refuse = [&](const std::string& why) {
    return Error("fusion definition " + std::string(where) + ": " + why);
  };
  if (bytes.empty()) throw refuse("the file is empty");
  if (static_cast<int64_t>(bytes.size()) > detail::kMaxDefinitionBytes)
    throw refuse("the file is larger than any fusion definition (" + std::to_string(bytes.size()) +
                 " bytes)");
  if (bytes.size() < 8 || !fb::FusionDefinitionBufferHasIdentifier(bytes.data()))
    throw refuse("not a Braze fusion definition (no 'BRZF' file identifier)");
  // The verifier bounds every offset and length by the buffer before anything is read.
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), /*max_depth=*/16,
                                 /*max_tables=*/4'000'000);
  if (!fb::VerifyFusionDefinitionBuffer(verifier))
    throw refuse("corrupt or truncated (the flatbuffers verifier refused it)");
  const fb::FusionDefinition* definition = fb::GetFusionDefinition(bytes.data());
  const auto current = static_cast<uint32_t>(fb::FusionDefinitionVersion::Current);
  if (definition->schema_version() != current)
    throw refuse("written with fusion definition schema version " +
                 std::to_string(definition->schema_version()) + " (" +
                 text(definition->braze_version()) + "), this Braze reads version " +
                 std::to_string(current) + "; save the definition again with this Braze");
  return Replay(*definition, where).run();
}

}  // namespace braze::serde
