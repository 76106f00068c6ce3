#include "pointwise_params.h"

#include "braze/sdk/param_codec.h"

namespace braze::pointwise {

std::vector<uint8_t> encodeParams(const PointwiseParams& params) {
  return sdk::encodeParams(params);
}

PointwiseParams decodeParams(std::span<const uint8_t> bytes) {
  return sdk::decodeParams<PointwiseParams>(bytes);
}

std::string toString(const PointwiseParams& params) {
  return sdk::describeParams(params, "pointwise");
}

std::ostream& operator<<(std::ostream& os, const PointwiseParams& params) {
  return os << toString(params);
}

uint64_t hashParams(const PointwiseParams& params) {
  return sdk::hashParams(params);
}

}  // namespace braze::pointwise
