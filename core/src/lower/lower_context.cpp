#include "lower/lower_context.h"

#include "lower/index_compute.h"

#include <algorithm>

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/scalar_value.h"
#include "braze/ops/elementwise.h"

namespace braze::lower {

namespace {

constexpr ParallelType kLaunchTypes[] = {ParallelType::BIDx, ParallelType::BIDy,
                                         ParallelType::BIDz, ParallelType::TIDx,
                                         ParallelType::TIDy, ParallelType::TIDz};

const char* indexName(ParallelType type) {
  switch (type) {
    case ParallelType::BIDx:
      return "bidx";
    case ParallelType::BIDy:
      return "bidy";
    case ParallelType::BIDz:
      return "bidz";
    case ParallelType::TIDx:
      return "tidx";
    case ParallelType::TIDy:
      return "tidy";
    case ParallelType::TIDz:
      return "tidz";
    default:
      return "?";
  }
}

}  // namespace

std::string describeAxis(const TensorView* tv, int64_t axis) {
  return tv->name() + " axis " + std::to_string(axis) + " (" + tv->loopAxis(axis)->name() + ")";
}

LowerContext::LowerContext(const Fusion& fusion, Fusion& mutable_fusion,
                           const LowerOptions& options)
    : fusion_(fusion), mutable_fusion_(mutable_fusion), options_(options) {
  BRAZE_USER_CHECK(options.index_type == DataType::Int32 || options.index_type == DataType::Int64)
      << "lowering: the index type must be int32 or int64, not " << options.index_type;
  for (const Expr* expr : fusion.exprs()) {
    // Scalar Exprs (extent arithmetic, scalar math) are printed where they are used.
    if (std::any_of(expr->outputs().begin(), expr->outputs().end(),
                    [](const Val* v) { return v->isA<TensorView>(); })) {
      exprs_.push_back(expr);
    }
  }
  graph_ = std::make_unique<IdGraph>(exprs_);
  collectVectorSplits();
  collectParameters();
  nameSizes();
  chooseExtents();
  computeLaunch();
}

MemoryType LowerContext::memoryOf(const TensorView* tv) const {
  if (fusion_.isInput(tv) || fusion_.isOutput(tv)) return MemoryType::Global;
  return tv->memoryType();
}

void LowerContext::collectVectorSplits() {
  for (const Expr* expr : exprs_) {
    // Only copies between global memory and registers become vector accesses, whose
    // divisibility vectorize-accesses checks at launch (or refuses at lowering).
    if (expr->op() != OpKind::Set) continue;
    const auto* out = expr->output(0)->dynCast<TensorView>();
    const auto* in = expr->input(0)->dynCast<TensorView>();
    if (out == nullptr || in == nullptr) continue;
    if ((memoryOf(out) == MemoryType::Global) == (memoryOf(in) == MemoryType::Global)) continue;
    for (const IterDomain* id : out->loop()) {
      if (id->parallelType() != ParallelType::Vectorize) continue;
      const Expr* split = id->definition();
      if (split == nullptr || split->op() != OpKind::Split || split->output(1) != id ||
          !split->attribute<bool>("inner_split"))
        continue;
      const auto width = split->input(1)->as<Scalar>()->constantInt();
      if (!width) continue;
      vector_splits_.emplace_back(graph_->exactGroup(split->input(0)->as<IterDomain>()), *width);
    }
  }
}

bool LowerContext::dividesEvenly(const Expr& split) const {
  if (isDivisibleSplit(split)) return true;
  if (split.attribute<bool>("inner_split") == false) return false;
  const auto factor = split.input(1)->as<Scalar>()->constantInt();
  if (!factor) return false;
  const int64_t group = graph_->exactGroup(split.input(0)->as<IterDomain>());
  return std::find(vector_splits_.begin(), vector_splits_.end(), std::make_pair(group, *factor)) !=
         vector_splits_.end();
}

void LowerContext::collectParameters() {
  auto add = [&](kir::Parameter p) {
    if (const auto* tv = p.val->dynCast<TensorView>()) {
      parameter_of_.emplace(tv, static_cast<int64_t>(parameters_.size()));
    }
    parameters_.push_back(std::move(p));
  };
  for (size_t i = 0; i < fusion_.inputs().size(); ++i) {
    const Val* input = fusion_.inputs()[i];
    const bool is_tensor = input->isA<TensorView>();
    add({is_tensor ? kir::Parameter::Kind::InputTensor : kir::Parameter::Kind::InputScalar, input,
         static_cast<int64_t>(i), nullptr, input->name()});
  }
  for (size_t i = 0; i < fusion_.outputs().size(); ++i) {
    const Val* output = fusion_.outputs()[i];
    const auto* tv = output->dynCast<TensorView>();
    BRAZE_USER_CHECK(tv != nullptr) << "lowering: output " << i << " (" << output->name()
                                    << ") is a scalar; a kernel can only produce tensors";
    BRAZE_USER_CHECK(!fusion_.isInput(tv))
        << "lowering: output " << i << " (" << tv->name()
        << ") is also an input of the fusion; a kernel does not copy inputs to outputs";
    BRAZE_USER_CHECK(parameter_of_.count(tv) == 0)
        << "lowering: " << tv->name() << " is listed twice among the fusion's outputs";
    add({kir::Parameter::Kind::OutputTensor, tv, static_cast<int64_t>(i), nullptr, tv->name()});
  }
  for (const Expr* expr : exprs_) {
    for (const Val* v : expr->outputs()) {
      const auto* tv = v->dynCast<TensorView>();
      if (tv == nullptr || parameter_of_.count(tv) || memoryOf(tv) != MemoryType::Global) continue;
      add({kir::Parameter::Kind::GlobalBuffer, tv, -1, nullptr, tv->name()});
    }
  }
}

int64_t LowerContext::parameterOf(const TensorView* tv) const {
  auto it = parameter_of_.find(tv);
  return it == parameter_of_.end() ? -1 : it->second;
}

void LowerContext::nameSizes() {
  auto name_leaf = [&](const Val* v, std::string text) {
    const auto* s = v->dynCast<Scalar>();
    if (s == nullptr || s->isConstant() || s->definition() != nullptr) return;
    signed_scalars_.erase(s);
    scalar_names_.emplace(s, std::move(text));
  };
  for (const kir::Parameter& p : parameters_) {
    if (p.kind == kir::Parameter::Kind::InputScalar) {
      if (scalar_names_.emplace(p.val, p.name).second) signed_scalars_.insert(p.val);
      continue;
    }
    const auto* tv = p.val->as<TensorView>();
    const std::vector<IterDomain*> dims = tv->logicalNoReductions();
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string text = p.name + ".size[" + std::to_string(d) + "]";
      if (p.kind == kir::Parameter::Kind::InputTensor) {
        name_leaf(dims[d]->extent(), text);
      } else {
        name_leaf(dims[d]->logicalExtent(), text);
      }
    }
  }
}

kir::Value LowerContext::scalarValue(const Val* val) const {
  auto cached = scalar_values_.find(val);
  if (cached != scalar_values_.end()) return cached->second;
  const auto* s = val->dynCast<Scalar>();
  BRAZE_INTERNAL_CHECK(s != nullptr) << "lowering: " << val->name() << " is not a scalar";
  kir::Value result;
  if (s->isConstant()) {
    if (s->dtype() == DataType::Bool) {
      result = kir::boolean(toBool(*s->value()));
    } else {
      auto c = s->constantInt();
      BRAZE_USER_CHECK(c.has_value())
          << "lowering: the scalar " << s->name() << " is used as an index or size but is not an "
          << "integer";
      result = kir::constant(*c);
    }
  } else if (auto named = scalar_names_.find(s); named != scalar_names_.end()) {
    result = kir::symbol(named->second, {.role = signed_scalars_.count(s) ? kir::SymbolRole::Other
                                                                          : kir::SymbolRole::Extent,
                                         .fusion_val = s,
                                         .order = 1000000 + s->id()});
  } else if (const Expr* def = s->definition()) {
    auto in = [&](size_t i) { return scalarValue(def->input(i)); };
    switch (def->op()) {
      case OpKind::Add:
        result = in(0) + in(1);
        break;
      case OpKind::Sub:
        result = in(0) - in(1);
        break;
      case OpKind::Mul:
        result = in(0) * in(1);
        break;
      case OpKind::Div:
        result = kir::div(in(0), in(1));
        break;
      case OpKind::CeilDiv:
        result = kir::ceilDiv(in(0), in(1));
        break;
      case OpKind::Remainder:
      case OpKind::Fmod:
        result = kir::mod(in(0), in(1));
        break;
      case OpKind::Maximum:
        result = kir::max(in(0), in(1));
        break;
      case OpKind::Minimum:
        result = kir::min(in(0), in(1));
        break;
      case OpKind::Neg:
        result = kir::constant(0) - in(0);
        break;
      case OpKind::Cast:
        BRAZE_USER_CHECK(isIntegral(def->input(0)->dtype()))
            << "lowering: the scalar " << s->name() << " is a cast of a non-integer";
        result = in(0);
        break;
      case OpKind::Eq:
        result = kir::eq(in(0), in(1));
        break;
      case OpKind::Lt:
        result = kir::lt(in(0), in(1));
        break;
      case OpKind::Le:
        result = kir::le(in(0), in(1));
        break;
      case OpKind::Gt:
        result = kir::lt(in(1), in(0));
        break;
      case OpKind::Ge:
        result = kir::le(in(1), in(0));
        break;
      case OpKind::Where:
        result = kir::select(in(0), in(1), in(2));
        break;
      default:
        BRAZE_THROW() << "lowering: the scalar " << s->name() << " is computed by " << def->op()
                      << ", which a kernel cannot evaluate as an index or size";
    }
  } else {
    BRAZE_THROW() << "lowering: the scalar " << s->name()
                  << " is neither an input of the fusion nor a size of a tensor the kernel "
                     "receives, so the kernel cannot know its value";
  }
  scalar_values_.emplace(val, result);
  return result;
}

void LowerContext::chooseExtents() {
  // Preference: a constant, then a size the kernel receives, then an expression; earlier
  // statements first.
  auto rank = [&](const Val* v) {
    const auto* s = v->as<Scalar>();
    if (s->isConstant()) return 0;
    if (scalar_names_.count(s)) return 1;
    if (s->definition() != nullptr) return 2;
    return 3;
  };
  for (const IterDomain* id : graph_->allIds()) {
    if (id->isBroadcast()) continue;
    const Val* extent = id->logicalExtent();
    const int64_t group = graph_->exactGroup(id);
    auto [it, inserted] = group_extent_.emplace(group, extent);
    if (inserted) continue;
    const int ra = rank(extent);
    const int rb = rank(it->second);
    if (ra < rb || (ra == rb && extent->id() < it->second->id())) it->second = extent;
  }
}

kir::Value LowerContext::extentOf(const IterDomain* id) const {
  return scalarValue(extentValOf(id));
}

const Val* LowerContext::extentValOf(const IterDomain* id) const {
  if (!id->isBroadcast()) {
    auto it = group_extent_.find(graph_->exactGroup(id));
    if (it != group_extent_.end()) return it->second;
  }
  return id->logicalExtent();
}

void LowerContext::computeLaunch() {
  for (ParallelType type : kLaunchTypes) {
    const int slot = kir::launchSlot(type);
    std::vector<const Val*> sizes;
    for (const TensorView* tv : graph_->tensors()) {
      if (tv->definition() == nullptr) continue;
      for (const IterDomain* id : tv->loop()) {
        const IterDomain* loop = graph_->promoted(id);
        if (loop->parallelType() != type) continue;
        const Val* size = loop->logicalExtent();
        const bool seen = std::any_of(sizes.begin(), sizes.end(), [&](const Val* other) {
          if (other == size) return true;
          auto a = other->as<Scalar>()->constantInt();
          auto b = size->as<Scalar>()->constantInt();
          return a && b && *a == *b;
        });
        if (!seen) sizes.push_back(size);
      }
    }
    kir::LaunchDim& dim = launch_[static_cast<size_t>(slot)];
    if (sizes.empty()) {
      parallel_index_[static_cast<size_t>(slot)] = kir::constant(0);
      continue;
    }
    dim.used = true;
    // Several loops bound to one dim launch the largest; smaller ones are predicated.
    const Val* size = sizes[0];
    for (size_t i = 1; i < sizes.size(); ++i) {
      size = maximum(Operand(const_cast<Val*>(size)), Operand(const_cast<Val*>(sizes[i])));
    }
    dim.size = size;
    dim.size_in_kernel = scalarValue(size);
    // A thread dim that follows extents the kernel is compiled for (Fusion::assumeExtent) is a
    // constant of the kernel; the launch checks the extents (checkAssumedExtents).
    if (slot >= 3 && !dim.size_in_kernel.constantValue() && !fusion_.assumedExtents().empty()) {
      ExpressionEvaluator assumed;
      for (const auto& [extent, value] : fusion_.assumedExtents()) assumed.bind(extent, value);
      if (std::optional<ScalarValue> known = assumed.evaluate(size))
        dim.size_in_kernel = kir::constant(toInt64(*known));
    }
    parallel_index_[static_cast<size_t>(slot)] =
        kir::symbol(indexName(type), {.role = kir::SymbolRole::ThreadIndex,
                                      .parallel_type = type,
                                      .bound = dim.size_in_kernel,
                                      .order = slot});
  }
}

kir::Value LowerContext::parallelIndex(ParallelType type) const {
  const int slot = kir::launchSlot(type);
  BRAZE_INTERNAL_CHECK(slot >= 0) << "lowering: " << type << " has no thread or block index";
  return parallel_index_[static_cast<size_t>(slot)];
}

const kir::LaunchDim& LowerContext::launchDim(ParallelType type) const {
  const int slot = kir::launchSlot(type);
  BRAZE_INTERNAL_CHECK(slot >= 0) << "lowering: " << type << " is not a launch dimension";
  return launch_[static_cast<size_t>(slot)];
}

std::vector<kir::Value> LowerContext::globalStrides(const TensorView* tv) const {
  const std::vector<IterDomain*> dims = tv->logicalNoReductions();
  std::vector<kir::Value> strides(dims.size(), kir::constant(0));
  const int64_t param = parameterOf(tv);
  BRAZE_INTERNAL_CHECK(param >= 0) << "lowering: " << tv->name() << " is not a kernel parameter";
  const bool is_input =
      parameters_[static_cast<size_t>(param)].kind == kir::Parameter::Kind::InputTensor;
  kir::Value running = kir::constant(1);
  const std::vector<int64_t>& order = tv->allocationOrder();
  if (!is_input) {
    // Outputs and buffers are allocated dense in their allocation order (row-major unless
    // stride_order gave another), expanded dims materialized: the runtime allocates them so.
    for (size_t k = order.size(); k-- > 0;) {
      const auto d = static_cast<size_t>(order[k]);
      strides[d] = running;
      running = running * extentOf(dims[d]);
    }
    return strides;
  }
  const std::string name = parameters_[static_cast<size_t>(param)].name;
  for (size_t k = order.size(); k-- > 0;) {
    const auto d = static_cast<size_t>(order[k]);
    if (dims[d]->isBroadcast()) continue;  // index 0: its stride never matters
    const std::optional<bool>& contiguous = tv->contiguity()[d];
    if (contiguous.value_or(false)) {
      strides[d] = running;
    } else {
      strides[d] = kir::symbol(name + ".stride[" + std::to_string(d) + "]",
                               {.role = kir::SymbolRole::Stride,
                                .tensor_parameter = param,
                                .dim = static_cast<int64_t>(d),
                                .order = 2000000 + param * 64 + static_cast<int64_t>(d)});
    }
    running = strides[d] * extentOf(dims[d]);
  }
  return strides;
}

const AllocationLayout& LowerContext::layoutOf(const TensorView* tv) const {
  auto it = layouts_.find(tv);
  if (it != layouts_.end()) return it->second;
  const MemoryType memory = memoryOf(tv);
  BRAZE_INTERNAL_CHECK(memory != MemoryType::Global)
      << "lowering: " << tv->name() << " is in global memory and has no allocation layout";
  AllocationLayout layout;
  const int64_t k = graph_->inlinePositionOf(tv);
  for (int64_t j = 0; j < tv->nLoopDims(); ++j) {
    const IterDomain* id = tv->loopAxis(j);
    if (id->isReduction()) continue;
    if (id->isBroadcast() && !id->hasExpandedExtent()) continue;
    const ParallelType type = id->parallelType();
    bool stored = false;
    if (memory == MemoryType::Local) {
      stored = j >= k && !isThreadDim(type) && !isBlockDim(type);
    } else {
      // Shared memory is seen by every thread of a block, so thread dims are stored even
      // where the tensor is inlined; each block has its own.
      stored = (j >= k && !isBlockDim(type)) || isThreadDim(type);
    }
    if (!stored) continue;
    const kir::Value extent = extentOf(id);
    BRAZE_USER_CHECK(memory != MemoryType::Local || extent.isConstant())
        << "lowering: " << tv->name() << " is in registers but " << describeAxis(tv, j)
        << " has the symbolic extent " << extent.toString()
        << "; registers need a constant size: inline " << tv->name()
        << " past this axis, split it by a constant, or keep the tensor in shared or global "
           "memory";
    layout.positions.push_back(j);
    layout.extents.push_back(extent);
    if (memory == MemoryType::Shared) {
      Val* extent_val = const_cast<Val*>(extentValOf(id));
      layout.size_at_launch =
          layout.size_at_launch == nullptr
              ? extent_val
              : mul(Operand(const_cast<Val*>(layout.size_at_launch)), Operand(extent_val));
    }
  }
  if (memory == MemoryType::Shared && layout.size_at_launch == nullptr)
    layout.size_at_launch = mutable_fusion_.constantIndex(1);
  layout.strides.assign(layout.extents.size(), kir::constant(1));
  kir::Value running = kir::constant(1);
  for (size_t i = layout.extents.size(); i-- > 0;) {
    layout.strides[i] = running;
    running = running * layout.extents[i];
  }
  layout.size = running;
  return layouts_.emplace(tv, std::move(layout)).first->second;
}

}  // namespace braze::lower
