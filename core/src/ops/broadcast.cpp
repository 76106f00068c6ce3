// broadcast, broadcast_in_dim, expand, squeeze and unsqueeze: ops that add or remove Broadcast
// dims, or give them an expanded extent, without touching the data.
//
//   x:                       T0: float32[i0{s0}, b1{1}]
//   broadcast(x, {T,F,F}):   T1: float32[b2{1}, i3{s0}, b4{1}]
//   expand(T1, {4, -1, 8}):  T2: float32[b5{1 ex 4}, i6{s0}, b7{1 ex 8}]
//   squeeze(T2, {2}):        refused: dim 2 has size 8

#include <algorithm>

#include "braze/ops/shape.h"
#include "ops/domain_builder.h"
#include "ops/extent_arithmetic.h"

namespace braze {

namespace {

using ops_detail::freshIterDomain;
using ops_detail::indexScalar;
using ops_detail::tensorLabel;

void checkInput(std::string_view op, const TensorView* x) {
  BRAZE_USER_CHECK(x != nullptr) << op << ": the input tensor is null";
}

std::string flagsText(const std::vector<bool>& flags) {
  return toString(AttributeValue(flags));
}

bool isConstant(const Scalar* s, int64_t value) {
  return s->constantInt() == std::optional<int64_t>(value);
}

// A size-1 dim that holds data of its own: a Broadcast dim that is not expanded.
bool isPlainBroadcast(const IterDomain* id) {
  return id->isBroadcast() && !id->hasExpandedExtent();
}

// The expand size of one dim, or nullptr for -1 (keep the dim). Other negative constants are
// refused.
Scalar* expandSize(Fusion& fusion, const Operand& size, std::string_view op, int64_t dim) {
  const std::string argument = "size of dim " + std::to_string(dim);
  Scalar* scalar = indexScalar(fusion, size, op, argument);
  const std::optional<int64_t> value = scalar->constantInt();
  if (value == -1) return nullptr;
  BRAZE_USER_CHECK(!value || *value >= 0) << op << ": " << argument << " is " << *value
                                          << "; sizes must be non-negative, or -1 to keep the dim";
  return scalar;
}

// The output dim of expanding `id` to `size` (nullptr keeps it). A broadcast dim takes the size
// as its expanded extent; any other dim must keep its size, which is checked when both sizes
// are constants (the input's extent stays authoritative otherwise).
IterDomain* expandDim(std::string_view op, const TensorView* x, int64_t dim, IterDomain* id,
                      Scalar* size) {
  if (size == nullptr) return freshIterDomain(id);
  if (isPlainBroadcast(id)) {
    if (isConstant(size, 1)) return freshIterDomain(id);
    return id->fusion().create<IterDomain>(id->extent(), IterType::Broadcast, size);
  }
  const std::optional<int64_t> current = id->logicalExtent()->constantInt();
  const std::optional<int64_t> wanted = size->constantInt();
  BRAZE_USER_CHECK(!current || !wanted || *current == *wanted)
      << op << " of " << tensorLabel(x) << ": dim " << dim
      << (id->hasExpandedExtent() ? " is already expanded to size " : " has size ") << *current
      << (id->hasExpandedExtent() ? "" : " and is not a broadcast dim")
      << ", so it cannot be expanded to " << *wanted << "; pass -1 or " << *current
      << " to keep it, or make it a broadcast dim (unsqueeze, broadcast) first";
  return freshIterDomain(id);
}

TensorView* expandTo(std::string_view op, TensorView* x, const std::vector<Scalar*>& sizes) {
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<IterDomain*> domain;
  for (size_t i = 0; i < dims.size(); ++i) {
    domain.push_back(expandDim(op, x, static_cast<int64_t>(i), dims[i], sizes[i]));
  }
  auto* y = x->fusion().create<TensorView>(x->dtype(), std::move(domain));
  x->fusion().create<Expr>(OpKind::Expand, std::vector<Val*>{x}, std::vector<Val*>{y});
  return y;
}

}  // namespace

TensorView* broadcast(TensorView* x, const std::vector<bool>& is_broadcast_dim) {
  checkInput("broadcast", x);
  const auto kept = std::count(is_broadcast_dim.begin(), is_broadcast_dim.end(), false);
  BRAZE_USER_CHECK(kept == x->rank())
      << "broadcast of " << tensorLabel(x) << ": is_broadcast_dim " << flagsText(is_broadcast_dim)
      << " has " << kept << " false entries but the tensor has rank " << x->rank()
      << "; give one false entry per input dim, in order, and true for each new dim";
  Fusion& fusion = x->fusion();
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  std::vector<IterDomain*> domain;
  size_t next = 0;
  for (bool is_new : is_broadcast_dim) {
    domain.push_back(is_new
                         ? fusion.create<IterDomain>(fusion.constantIndex(1), IterType::Broadcast)
                         : freshIterDomain(dims[next++]));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(domain));
  fusion.create<Expr>(OpKind::Broadcast, std::vector<Val*>{x}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"flags", is_broadcast_dim}});
  return y;
}

TensorView* broadcast_in_dim(TensorView* x, const std::vector<Operand>& shape,
                             const std::vector<int64_t>& broadcast_dims) {
  checkInput("broadcast_in_dim", x);
  const auto out_rank = static_cast<int64_t>(shape.size());
  BRAZE_USER_CHECK(static_cast<int64_t>(broadcast_dims.size()) == x->rank())
      << "broadcast_in_dim of " << tensorLabel(x) << ": broadcast_dims has "
      << broadcast_dims.size() << " entries but the tensor has rank " << x->rank()
      << "; give the output dim of each input dim";
  std::vector<bool> flags(shape.size(), true);
  for (size_t i = 0; i < broadcast_dims.size(); ++i) {
    const int64_t dim = broadcast_dims[i];
    BRAZE_USER_CHECK(dim >= 0 && dim < out_rank)
        << "broadcast_in_dim of " << tensorLabel(x) << ": broadcast_dims[" << i << "] = " << dim
        << " is out of range for an output of rank " << out_rank << "; valid dims are 0 .. "
        << out_rank - 1;
    BRAZE_USER_CHECK(i == 0 || dim > broadcast_dims[i - 1])
        << "broadcast_in_dim of " << tensorLabel(x) << ": broadcast_dims "
        << toString(AttributeValue(broadcast_dims))
        << " must be strictly increasing (input dims keep their order)";
    flags[static_cast<size_t>(dim)] = false;
  }
  Fusion& fusion = x->fusion();
  std::vector<Scalar*> sizes;
  for (int64_t dim = 0; dim < out_rank; ++dim) {
    const std::string argument = "shape[" + std::to_string(dim) + "]";
    Scalar* size =
        indexScalar(fusion, shape[static_cast<size_t>(dim)], "broadcast_in_dim", argument);
    const std::optional<int64_t> value = size->constantInt();
    BRAZE_USER_CHECK(!value || *value >= 0)
        << "broadcast_in_dim of " << tensorLabel(x) << ": " << argument << " is " << *value
        << "; sizes must be non-negative";
    sizes.push_back(size);
  }
  // Input dims that hold data keep their size: pass -1 (nullptr) for them after checking.
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  bool needs_expand = false;
  for (size_t i = 0; i < broadcast_dims.size(); ++i) {
    const auto out = static_cast<size_t>(broadcast_dims[i]);
    if (isPlainBroadcast(dims[i])) continue;
    const std::optional<int64_t> current = dims[i]->logicalExtent()->constantInt();
    const std::optional<int64_t> wanted = sizes[out]->constantInt();
    BRAZE_USER_CHECK(!current || !wanted || *current == *wanted)
        << "broadcast_in_dim of " << tensorLabel(x) << ": input dim " << i << " has size "
        << *current << " but shape[" << out << "] is " << *wanted
        << "; only size-1 dims can be broadcast to another size";
    sizes[out] = nullptr;
  }
  for (Scalar* size : sizes) needs_expand = needs_expand || (size && !isConstant(size, 1));
  TensorView* y = x;
  if (std::find(flags.begin(), flags.end(), true) != flags.end()) y = broadcast(x, flags);
  if (!needs_expand) return y;
  return expandTo("broadcast_in_dim", y, sizes);
}

TensorView* expand(TensorView* x, const std::vector<Operand>& sizes) {
  checkInput("expand", x);
  BRAZE_USER_CHECK(static_cast<int64_t>(sizes.size()) >= x->rank())
      << "expand of " << tensorLabel(x) << ": " << sizes.size()
      << " sizes given for a tensor of rank " << x->rank()
      << "; give one size per dim (-1 keeps a dim), plus any new leading dims";
  Fusion& fusion = x->fusion();
  const auto new_dims = static_cast<int64_t>(sizes.size()) - x->rank();
  std::vector<Scalar*> scalars;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Scalar* size = expandSize(fusion, sizes[i], "expand", static_cast<int64_t>(i));
    BRAZE_USER_CHECK(size != nullptr || static_cast<int64_t>(i) >= new_dims)
        << "expand of " << tensorLabel(x) << ": size -1 at dim " << i
        << " is not allowed for a new leading dim; give its size";
    scalars.push_back(size);
  }
  TensorView* input = x;
  if (new_dims > 0) {
    // As PyTorch: extra leading sizes add new dims, which are broadcasts until expanded.
    std::vector<bool> flags(sizes.size(), false);
    std::fill(flags.begin(), flags.begin() + new_dims, true);
    input = broadcast(x, flags);
  }
  return expandTo("expand", input, scalars);
}

TensorView* squeeze(TensorView* x, const std::vector<int64_t>& dims) {
  checkInput("squeeze", x);
  const std::vector<IterDomain*> domain = x->logicalNoReductions();
  std::vector<bool> flags(domain.size(), false);
  for (int64_t dim : dims) {
    const int64_t d = ops_detail::normalizeDim("squeeze", x, dim, x->rank());
    BRAZE_USER_CHECK(!flags[static_cast<size_t>(d)])
        << "squeeze of " << tensorLabel(x) << ": dim " << dim << " (dim " << d
        << ") appears more than once; list each dim once";
    IterDomain* id = domain[static_cast<size_t>(d)];
    BRAZE_USER_CHECK(isPlainBroadcast(id) || isConstant(id->logicalExtent(), 1))
        << "squeeze of " << tensorLabel(x) << ": dim " << dim << " has size "
        << id->logicalExtent()->name()
        << (id->hasExpandedExtent() ? " (an expanded broadcast)" : "")
        << "; only dims of size 1 can be removed (shape " << ops_detail::shapeText(x) << ")";
    flags[static_cast<size_t>(d)] = true;
  }
  Fusion& fusion = x->fusion();
  std::vector<IterDomain*> kept;
  for (size_t i = 0; i < domain.size(); ++i) {
    if (!flags[i]) kept.push_back(freshIterDomain(domain[i]));
  }
  auto* y = fusion.create<TensorView>(x->dtype(), std::move(kept));
  fusion.create<Expr>(OpKind::Squeeze, std::vector<Val*>{x}, std::vector<Val*>{y},
                      std::vector<Attribute>{{"flags", flags}});
  return y;
}

TensorView* unsqueeze(TensorView* x, int64_t dim) {
  checkInput("unsqueeze", x);
  const int64_t d = ops_detail::normalizeDim("unsqueeze", x, dim, x->rank() + 1);
  std::vector<bool> flags(static_cast<size_t>(x->rank() + 1), false);
  flags[static_cast<size_t>(d)] = true;
  return broadcast(x, flags);
}

}  // namespace braze
