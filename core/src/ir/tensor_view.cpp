#include "braze/ir/tensor_view.h"

#include <algorithm>
#include <numeric>

#include "braze/ir/fusion.h"

namespace braze {

std::string_view toString(MemoryType type) {
  switch (type) {
    case MemoryType::Global:
      return "global";
    case MemoryType::Shared:
      return "shared";
    case MemoryType::Local:
      return "local";
  }
  return "?";
}

TensorView::TensorView(Fusion& fusion, DataType dtype, std::vector<IterDomain*> logical)
    : Val(fusion, StatementKind::TensorView, dtype), logical_(std::move(logical)), loop_(logical_) {
  const std::vector<IterDomain*> visible = logicalNoReductions();
  allocation_order_.resize(visible.size());
  std::iota(allocation_order_.begin(), allocation_order_.end(), 0);
  contiguity_.reserve(visible.size());
  for (IterDomain* id : visible) {
    contiguity_.push_back(id->isBroadcast() ? std::nullopt : std::optional<bool>(true));
  }
}

std::vector<IterDomain*> TensorView::logicalNoReductions() const {
  std::vector<IterDomain*> visible;
  visible.reserve(logical_.size());
  for (IterDomain* id : logical_) {
    if (!id->isReduction()) visible.push_back(id);
  }
  return visible;
}

IterDomain* TensorView::axis(int64_t logical_position) const {
  BRAZE_INTERNAL_CHECK(logical_position >= 0 && logical_position < nDims())
      << name() << " has " << nDims() << " logical dims; asked for " << logical_position;
  return logical_[static_cast<size_t>(logical_position)];
}

bool TensorView::hasReduction() const {
  return std::any_of(logical_.begin(), logical_.end(),
                     [](IterDomain* id) { return id->isReduction(); });
}

void TensorView::setLayout(std::vector<int64_t> allocation_order,
                           std::vector<std::optional<bool>> contiguity) {
  const auto visible_rank = static_cast<size_t>(rank());
  BRAZE_USER_CHECK(allocation_order.size() == visible_rank)
      << "layout of " << name() << ": allocation order has " << allocation_order.size()
      << " entries but the tensor has rank " << visible_rank;
  std::vector<int64_t> sorted = allocation_order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    BRAZE_USER_CHECK(sorted[i] == static_cast<int64_t>(i))
        << "layout of " << name() << ": allocation order must be a permutation of 0.."
        << visible_rank - 1;
  }
  BRAZE_USER_CHECK(contiguity.size() == visible_rank)
      << "layout of " << name() << ": contiguity has " << contiguity.size()
      << " entries but the tensor has rank " << visible_rank;
  const std::vector<IterDomain*> visible = logicalNoReductions();
  for (size_t i = 0; i < visible_rank; ++i) {
    BRAZE_USER_CHECK(visible[i]->isBroadcast() == !contiguity[i].has_value())
        << "layout of " << name() << ": contiguity of dim " << i
        << " must be None exactly when the dim is a broadcast ("
        << (visible[i]->isBroadcast() ? "it is one" : "it is not") << ")";
  }
  allocation_order_ = std::move(allocation_order);
  contiguity_ = std::move(contiguity);
}

void TensorView::setDomains(std::vector<IterDomain*> root, std::vector<IterDomain*> logical) {
  const size_t visible_rank = static_cast<size_t>(rank());
  root_ = std::move(root);
  logical_ = std::move(logical);
  BRAZE_INTERNAL_CHECK(static_cast<size_t>(rank()) == visible_rank)
      << name() << ": a scheduling primitive changed the user-visible rank";
}

void TensorView::restoreDomains(const TensorView& original, const CloneMap& map) {
  logical_.clear();
  for (IterDomain* d : original.logical_) logical_.push_back(map[d]);
  root_.clear();
  for (IterDomain* d : original.root_) root_.push_back(map[d]);
}

std::string TensorView::name() const {
  return "T" + std::to_string(number());
}

Statement* TensorView::cloneInto(Fusion& target, const CloneMap& map) const {
  // After rFactor a tensor's root or logical domain may hold IterDomains created after the
  // tensor; those are not cloned yet, so restoreDomains fills the domains in later.
  const bool domains_precede = std::all_of(logical_.begin(), logical_.end(),
                                           [this](IterDomain* d) { return d->id() < id(); }) &&
                               root_.empty();
  std::vector<IterDomain*> logical;
  if (domains_precede) {
    logical.reserve(logical_.size());
    for (IterDomain* d : logical_) logical.push_back(map[d]);
  }
  auto* copy = target.create<TensorView>(dtype(), std::move(logical));
  copy->allocation_order_ = allocation_order_;
  copy->contiguity_ = contiguity_;
  copy->memory_type_ = memory_type_;
  copy->inline_position_ = inline_position_;
  copy->stream_axis_ = stream_axis_;
  copy->sharding_ = sharding_;
  // The loop domain may refer to IterDomains created after this tensor (by scheduling);
  // Fusion::clone sets it once every statement exists.
  return copy;
}

}  // namespace braze
