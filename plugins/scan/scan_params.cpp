#include "scan_params.h"

#include "braze/sdk/param_codec.h"

namespace braze::scan {

std::vector<uint8_t> encodeParams(const ScanParams& params) {
  return sdk::encodeParams(params);
}

ScanParams decodeParams(std::span<const uint8_t> bytes) {
  return sdk::decodeParams<ScanParams>(bytes);
}

std::string toString(const ScanParams& params) {
  return sdk::describeParams(params, "scan");
}

std::ostream& operator<<(std::ostream& os, const ScanParams& params) {
  return os << toString(params);
}

}  // namespace braze::scan
