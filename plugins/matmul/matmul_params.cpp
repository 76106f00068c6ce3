#include "matmul_params.h"

#include "braze/sdk/param_codec.h"

namespace braze::matmul_scheduler {

std::vector<uint8_t> encodeParams(const MatmulParams& params) {
  return sdk::encodeParams(params);
}

MatmulParams decodeParams(std::span<const uint8_t> bytes) {
  return sdk::decodeParams<MatmulParams>(bytes);
}

std::string toString(const MatmulParams& params) {
  return sdk::describeParams(params, "matmul");
}

std::ostream& operator<<(std::ostream& os, const MatmulParams& params) {
  return os << toString(params);
}

}  // namespace braze::matmul_scheduler
