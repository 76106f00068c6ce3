#include "reduction_params.h"

#include <type_traits>

#include "braze/error.h"
#include "braze/sdk/param_codec.h"

namespace braze::reduction {

ReductionStrategy strategyOf(const ReductionParams& params) {
  if (params.inner) {
    if (params.grid_blocks > 1) return ReductionStrategy::InnerGrid;
    if (params.threads_x > 32) return ReductionStrategy::InnerBlock;
    if (params.threads_x > 1) return ReductionStrategy::InnerWarp;
    return ReductionStrategy::InnerThread;
  }
  if (params.grid_blocks > 1) return ReductionStrategy::OuterGrid;
  if (params.threads_y > 1) return ReductionStrategy::OuterBlock;
  return ReductionStrategy::OuterThread;
}

std::string_view toString(ReductionStrategy strategy) {
  switch (strategy) {
    case ReductionStrategy::InnerThread:
      return "inner_thread";
    case ReductionStrategy::InnerWarp:
      return "inner_warp";
    case ReductionStrategy::InnerBlock:
      return "inner_block";
    case ReductionStrategy::InnerGrid:
      return "inner_grid";
    case ReductionStrategy::OuterThread:
      return "outer_thread";
    case ReductionStrategy::OuterBlock:
      return "outer_block";
    case ReductionStrategy::OuterGrid:
      return "outer_grid";
  }
  return "unknown";
}

std::vector<uint8_t> encodeParams(const ReductionParams& params) {
  return sdk::encodeParams(params);
}

ReductionParams decodeParams(std::span<const uint8_t> bytes) {
  const ReductionParams params = sdk::decodeParams<ReductionParams>(bytes);
  ReductionParams::forEachField(params, [&](const char* name, const auto& field) {
    if constexpr (!std::is_same_v<std::decay_t<decltype(field)>, bool>) {
      // Every count is a factor of a split or a launch dimension: at least 1.
      BRAZE_USER_CHECK(field >= 1)
          << "reduction params: field " << name << " must be at least 1, found " << field
          << "; the bytes are corrupt";
    }
  });
  return params;
}

std::string toString(const ReductionParams& params) {
  return sdk::describeParams(params,
                             "reduction[" + std::string(toString(strategyOf(params))) + "]");
}

std::ostream& operator<<(std::ostream& os, const ReductionParams& params) {
  return os << toString(params);
}

uint64_t hashParams(const ReductionParams& params) {
  return sdk::hashParams(params);
}

}  // namespace braze::reduction
