#include "tma_ws_normalization_params.h"

#include "braze/sdk/param_codec.h"

namespace braze::tma_ws_normalization {

std::vector<uint8_t> encodeParams(const TmaWsNormalizationParams& params) {
  return sdk::encodeParams(params);
}

TmaWsNormalizationParams decodeParams(std::span<const uint8_t> bytes) {
  return sdk::decodeParams<TmaWsNormalizationParams>(bytes);
}

std::string toString(const TmaWsNormalizationParams& params) {
  return sdk::describeParams(params, "tma_ws_normalization");
}

std::ostream& operator<<(std::ostream& os, const TmaWsNormalizationParams& params) {
  return os << toString(params);
}

}  // namespace braze::tma_ws_normalization
