#include "pointwise_params.h"

#include "braze/error.h"
#include "braze/sdk/param_codec.h"

namespace braze::pointwise {

std::vector<uint8_t> encodeParams(const PointwiseParams& params) {
  return sdk::encodeParams(params);
}

PointwiseParams decodeParams(std::span<const uint8_t> bytes) {
  const PointwiseParams params = sdk::decodeParams<PointwiseParams>(bytes);
  // Params may be edited by hand (Python's compute_heuristics): counts are split factors and
  // launch dimensions, at least 1; a block has at most 1024 threads.
  auto check = [](const char* name, int64_t value, int64_t low, int64_t high) {
    BRAZE_USER_CHECK(value >= low && value <= high)
        << "pointwise params: " << name << " is " << value << ", outside [" << low << ", " << high
        << "]";
  };
  constexpr int64_t kAny = int64_t{1} << 62;
  check("reference_output", params.reference_output, 0, kAny);
  check("break_point", params.break_point, 0, kAny);
  check("vector_width", params.vector_width, 1, 16);
  check("unroll", params.unroll, 1, kAny);
  check("threads_per_block", params.threads_per_block, 1, 1024);
  check("blocks", params.blocks, 1, kAny);
  check("rows_per_block", params.rows_per_block, 1, 1024);
  check("row_unroll", params.row_unroll, 1, kAny);
  check("threads_per_block * rows_per_block", params.threads_per_block * params.rows_per_block, 1,
        1024);
  return params;
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
