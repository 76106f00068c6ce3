#include "ops/elementwise_shape.h"

#include <algorithm>
#include <optional>

#include "ops/domain_builder.h"

namespace braze::ops_detail {
namespace {

/// One operand's dim at an output position.
struct DimAtPosition {
  const BroadcastOperand* operand;
  int64_t dim;  ///< Position among the operand's user-visible dims.
  IterDomain* id;
};

/// The size this dim stands for when it is known now: a constant extent, or a constant
/// expanded extent for an expanded broadcast. A plain broadcast stands for no size (1).
std::optional<int64_t> constantSizeOf(const IterDomain* id) {
  if (id->isBroadcast() && !id->hasExpandedExtent()) return std::nullopt;
  return id->logicalExtent()->constantInt();
}

/// Refuses two different known sizes at one output position; 1 broadcasts against anything.
void checkConstantSizes(std::string_view op, const std::vector<DimAtPosition>& dims,
                        int64_t output_dim) {
  const DimAtPosition* first = nullptr;
  int64_t first_size = 0;
  for (const DimAtPosition& at : dims) {
    const std::optional<int64_t> size = constantSizeOf(at.id);
    if (!size || *size == 1) continue;
    if (first == nullptr) {
      first = &at;
      first_size = *size;
      continue;
    }
    BRAZE_USER_CHECK(*size == first_size)
        << op << ": cannot broadcast " << first->operand->argument << " = "
        << tensorLabel(first->operand->tensor) << " with " << at.operand->argument << " = "
        << tensorLabel(at.operand->tensor) << ": dim " << first->dim << " of "
        << first->operand->tensor->name() << " has size " << first_size << " but dim " << at.dim
        << " of " << at.operand->tensor->name() << " has size " << *size << " (output dim "
        << output_dim << "); sizes must be equal or one of them must be 1";
  }
}

/// How good an extent is as the output's extent: a constant other than 1 pins the size, a
/// symbolic one is checked later, a constant 1 is what every other size broadcasts over.
int extentPreference(const IterDomain* id) {
  const std::optional<int64_t> size = id->logicalExtent()->constantInt();
  if (!size) return 1;
  return *size == 1 ? 0 : 2;
}

IterDomain* outputDim(std::string_view op, const std::vector<DimAtPosition>& dims,
                      int64_t output_dim) {
  checkConstantSizes(op, dims, output_dim);
  Fusion& fusion = dims.front().id->fusion();
  const IterDomain* best_iteration = nullptr;
  for (const DimAtPosition& at : dims) {
    if (!at.id->isIteration()) continue;
    if (best_iteration == nullptr || extentPreference(at.id) > extentPreference(best_iteration)) {
      best_iteration = at.id;
    }
  }
  if (best_iteration != nullptr) {
    return fusion.create<IterDomain>(best_iteration->extent(), IterType::Iteration);
  }
  // Broadcast everywhere: keep an expanded extent if any operand has one.
  const IterDomain* best_expanded = nullptr;
  for (const DimAtPosition& at : dims) {
    if (!at.id->hasExpandedExtent()) continue;
    if (best_expanded == nullptr || extentPreference(at.id) > extentPreference(best_expanded)) {
      best_expanded = at.id;
    }
  }
  const IterDomain* like = best_expanded != nullptr ? best_expanded : dims.front().id;
  return fusion.create<IterDomain>(like->extent(), IterType::Broadcast, like->expandedExtent());
}

}  // namespace

std::vector<IterDomain*> broadcastDomain(std::string_view op,
                                         std::span<const BroadcastOperand> operands) {
  BRAZE_INTERNAL_CHECK(!operands.empty()) << op << ": broadcastDomain needs a tensor operand";
  std::vector<std::vector<IterDomain*>> visible;
  int64_t rank = 0;
  for (const BroadcastOperand& operand : operands) {
    visible.push_back(operand.tensor->logicalNoReductions());
    rank = std::max(rank, static_cast<int64_t>(visible.back().size()));
  }
  std::vector<IterDomain*> domain;
  domain.reserve(static_cast<size_t>(rank));
  for (int64_t position = 0; position < rank; ++position) {
    std::vector<DimAtPosition> dims;
    for (size_t i = 0; i < operands.size(); ++i) {
      const auto operand_rank = static_cast<int64_t>(visible[i].size());
      const int64_t dim = position - (rank - operand_rank);
      if (dim < 0) continue;  // a missing leading dim broadcasts
      dims.push_back({&operands[i], dim, visible[i][static_cast<size_t>(dim)]});
    }
    domain.push_back(outputDim(op, dims, position));
  }
  return domain;
}

}  // namespace braze::ops_detail
