#include "eval/eval_tensor.h"

#include <numeric>
#include <sstream>

#include "braze/ops/elementwise_semantics.h"
#include "eval/reduced_precision_bits.h"
#include "eval/strided_walk.h"

namespace braze::eval_detail {

Held heldOf(DataType dtype) {
  if (isBoolean(dtype)) return Held::Bool;
  if (isIntegral(dtype)) return Held::Int;
  return Held::Float;
}

EvalTensor EvalTensor::allocate(Held held, std::vector<int64_t> sizes) {
  EvalTensor tensor;
  tensor.held = held;
  tensor.strides = contiguousStrides(sizes);
  tensor.sizes = std::move(sizes);
  const auto count = static_cast<size_t>(std::max<int64_t>(tensor.numel(), 1));
  visitHeld(held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    tensor.storage = std::shared_ptr<T[]>(new T[count]);
  });
  return tensor;
}

EvalTensor EvalTensor::ofScalar(Held held, const ScalarValue& value) {
  return filled(held, {}, value);
}

EvalTensor EvalTensor::filled(Held held, std::vector<int64_t> sizes, const ScalarValue& value) {
  EvalTensor tensor = allocate(held, std::move(sizes));
  visitHeld(held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    const T typed = std::get<T>(castScalar(value, tag.kHeld == Held::Bool  ? DataType::Bool
                                                  : tag.kHeld == Held::Int ? DataType::Int64
                                                                           : DataType::Float64));
    std::fill_n(tensor.data<T>(), tensor.numel(), typed);
  });
  return tensor;
}

int64_t EvalTensor::numel() const {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>());
}

ScalarValue EvalTensor::load(int64_t element_offset) const {
  return visitHeld(held, [&](auto tag) -> ScalarValue {
    using T = typename decltype(tag)::Type;
    return data<T>()[element_offset];
  });
}

void copyInto(const EvalTensor& source, const EvalTensor& destination) {
  BRAZE_INTERNAL_CHECK(source.sizes == destination.sizes)
      << "copyInto: sizes " << formatSizes(source.sizes) << " and "
      << formatSizes(destination.sizes) << " differ";
  StridedOperands<2> walk;
  walk.sizes = source.sizes;
  walk.strides = {source.strides, destination.strides};
  walk.offsets = {source.offset, destination.offset};
  visitHeld(source.held, [&](auto from_tag) {
    using From = typename decltype(from_tag)::Type;
    visitHeld(destination.held, [&](auto to_tag) {
      using To = typename decltype(to_tag)::Type;
      const From* from = source.data<From>();
      To* to = destination.data<To>();
      walkStrided(walk, [&](const std::array<int64_t, 2>& at) {
        to[at[1]] = convertHeld<To>(from[at[0]]);
      });
    });
  });
}

EvalTensor materialize(const EvalTensor& source, Held held) {
  EvalTensor copy = EvalTensor::allocate(held, source.sizes);
  copyInto(source, copy);
  return copy;
}

EvalTensor convertedTo(const EvalTensor& tensor, Held held) {
  return tensor.held == held ? tensor : materialize(tensor, held);
}

namespace {

template <typename Stored, typename Decode>
void importWith(const HostTensor& host, const EvalTensor& target,
                const std::vector<int64_t>& storage_sizes, Decode decode) {
  StridedOperands<2> walk;
  walk.sizes = storage_sizes;
  walk.strides = {host.strides(), target.strides};
  const auto* from = static_cast<const Stored*>(host.data());
  visitHeld(target.held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    T* to = target.data<T>();
    walkStrided(walk, [&](const std::array<int64_t, 2>& at) { to[at[1]] = decode(from[at[0]]); });
  });
}

template <typename Stored, typename Encode>
void exportWith(const EvalTensor& tensor, HostTensor& host, Encode encode) {
  StridedOperands<2> walk;
  walk.sizes = tensor.sizes;
  walk.strides = {tensor.strides, host.strides()};
  walk.offsets = {tensor.offset, 0};
  auto* to = static_cast<Stored*>(host.data());
  visitHeld(tensor.held, [&](auto tag) {
    using T = typename decltype(tag)::Type;
    const T* from = tensor.data<T>();
    walkStrided(walk, [&](const std::array<int64_t, 2>& at) { to[at[1]] = encode(from[at[0]]); });
  });
}

}  // namespace

EvalTensor importHostTensor(const HostTensor& host) {
  // Storage only for the dims that have distinct elements.
  std::vector<int64_t> storage_sizes = host.sizes();
  for (size_t d = 0; d < storage_sizes.size(); ++d) {
    if (host.strides()[d] == 0) storage_sizes[d] = std::min<int64_t>(storage_sizes[d], 1);
  }
  EvalTensor tensor = EvalTensor::allocate(heldOf(host.dtype()), storage_sizes);
  tensor.sizes = host.sizes();
  for (size_t d = 0; d < storage_sizes.size(); ++d) {
    if (host.strides()[d] == 0) tensor.strides[d] = 0;
  }
  if (host.numel() == 0) return tensor;
  switch (host.dtype()) {
    case DataType::Bool:
      importWith<uint8_t>(host, tensor, storage_sizes, [](uint8_t v) { return v != 0; });
      break;
    case DataType::Int32:
      importWith<int32_t>(host, tensor, storage_sizes, [](int32_t v) { return int64_t{v}; });
      break;
    case DataType::Int64:
    case DataType::Index:
      importWith<int64_t>(host, tensor, storage_sizes, [](int64_t v) { return v; });
      break;
    case DataType::Float16:
      importWith<uint16_t>(host, tensor, storage_sizes, decodeFloat16);
      break;
    case DataType::BFloat16:
      importWith<uint16_t>(host, tensor, storage_sizes, decodeBFloat16);
      break;
    case DataType::Float8_e4m3fn:
      importWith<uint8_t>(host, tensor, storage_sizes, decodeFloat8E4M3fn);
      break;
    case DataType::Float8_e5m2:
      importWith<uint8_t>(host, tensor, storage_sizes, decodeFloat8E5M2);
      break;
    case DataType::Float32:
      importWith<float>(host, tensor, storage_sizes, [](float v) { return double{v}; });
      break;
    case DataType::Float64:
      importWith<double>(host, tensor, storage_sizes, [](double v) { return v; });
      break;
  }
  return tensor;
}

HostTensor exportHostTensor(const EvalTensor& source, DataType dtype,
                            const std::vector<int64_t>& allocation_order) {
  const EvalTensor tensor = convertedTo(source, heldOf(dtype));
  HostTensor host = HostTensor::empty(dtype, tensor.sizes, allocation_order);
  if (host.numel() == 0) return host;
  switch (dtype) {
    case DataType::Bool:
      exportWith<uint8_t>(tensor, host, [](auto v) { return static_cast<uint8_t>(v ? 1 : 0); });
      break;
    case DataType::Int32:
      // Wraps modulo 2^32, as storing to an int32 tensor does.
      exportWith<int32_t>(tensor, host, [](auto v) { return static_cast<int32_t>(v); });
      break;
    case DataType::Int64:
    case DataType::Index:
      exportWith<int64_t>(tensor, host, [](auto v) { return static_cast<int64_t>(v); });
      break;
    case DataType::Float16:
      exportWith<uint16_t>(tensor, host, [](auto v) {
        return encodeFloat16(roundToPrecision(static_cast<double>(v), DataType::Float16));
      });
      break;
    case DataType::BFloat16:
      exportWith<uint16_t>(tensor, host, [](auto v) {
        return encodeBFloat16(roundToPrecision(static_cast<double>(v), DataType::BFloat16));
      });
      break;
    case DataType::Float8_e4m3fn:
      exportWith<uint8_t>(tensor, host, [](auto v) {
        return encodeFloat8E4M3fn(
            roundToPrecision(static_cast<double>(v), DataType::Float8_e4m3fn));
      });
      break;
    case DataType::Float8_e5m2:
      exportWith<uint8_t>(tensor, host, [](auto v) {
        return encodeFloat8E5M2(roundToPrecision(static_cast<double>(v), DataType::Float8_e5m2));
      });
      break;
    case DataType::Float32:
      exportWith<float>(tensor, host, [](auto v) {
        return static_cast<float>(roundToPrecision(static_cast<double>(v), DataType::Float32));
      });
      break;
    case DataType::Float64:
      exportWith<double>(tensor, host, [](auto v) { return static_cast<double>(v); });
      break;
  }
  return host;
}

std::string tensorLabel(const TensorView& tv) {
  const int64_t input = tv.fusion().inputIndex(&tv);
  if (input < 0) return tv.name();
  return tv.name() + " (input " + std::to_string(input) + ")";
}

std::string exprLabel(const Expr& expr) {
  std::ostringstream os;
  for (size_t i = 0; i < expr.outputs().size(); ++i) {
    os << (i ? ", " : "") << expr.outputs()[i]->name();
  }
  os << " = " << expr.op() << "(";
  for (size_t i = 0; i < expr.inputs().size(); ++i) {
    os << (i ? ", " : "") << expr.inputs()[i]->name();
  }
  os << ")";
  return os.str();
}

EvalContext::EvalContext(const Fusion& fusion, ExpressionEvaluator& scalars)
    : scalars_(scalars), tensors_(static_cast<size_t>(fusion.numStatements())) {}

const EvalTensor& EvalContext::tensor(const Val* val) const {
  const auto id = static_cast<size_t>(val->id());
  BRAZE_INTERNAL_CHECK(id < tensors_.size() && tensors_[id] != nullptr)
      << val->name() << " is used before it is evaluated";
  return *tensors_[id];
}

void EvalContext::setTensor(const Val* val, EvalTensor value) {
  tensors_.at(static_cast<size_t>(val->id())) = std::make_unique<EvalTensor>(std::move(value));
}

void EvalContext::releaseTensor(const Val* val) {
  tensors_.at(static_cast<size_t>(val->id())).reset();
}

ScalarValue EvalContext::scalar(const Val* val, std::string_view what) {
  return scalars_.evaluateOrThrow(val, what);
}

std::vector<int64_t> EvalContext::extentsOf(const TensorView& tv) {
  std::vector<int64_t> sizes;
  const std::vector<IterDomain*> visible = tv.logicalNoReductions();
  sizes.reserve(visible.size());
  for (size_t d = 0; d < visible.size(); ++d) {
    const std::string what = "the extent of dim " + std::to_string(d) + " of " + tv.name();
    const int64_t size = toInt64(scalars_.evaluateOrThrow(visible[d]->logicalExtent(), what));
    BRAZE_USER_CHECK(size >= 0) << tv.name() << ": dim " << d << " evaluates to the negative size "
                                << size << " (extent " << visible[d]->logicalExtent()->name()
                                << ")";
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace braze::eval_detail
