#include "inner_outer_params.h"

#include "braze/error.h"
#include "braze/sdk/param_codec.h"

namespace braze::inner_outer {

std::string toString(Persistence persistence) {
  switch (persistence) {
    case Persistence::Registers:
      return "registers";
    case Persistence::Shared:
      return "shared";
    case Persistence::MultiWave:
      return "multi_wave";
  }
  return "unknown(" + std::to_string(static_cast<int64_t>(persistence)) + ")";
}

std::ostream& operator<<(std::ostream& os, Persistence persistence) {
  return os << toString(persistence);
}

std::vector<uint8_t> encodeParams(const InnerOuterParams& params) {
  return sdk::encodeParams(params);
}

InnerOuterParams decodeParams(std::span<const uint8_t> bytes) {
  const InnerOuterParams params = sdk::decodeParams<InnerOuterParams>(bytes);
  const auto persistence = static_cast<int64_t>(params.persistence);
  BRAZE_USER_CHECK(persistence >= 0 && persistence <= 2)
      << "inner_outer params: persistence " << persistence
      << " is not one of 0 (registers), 1 (shared), 2 (multi_wave); the bytes are corrupt";
  // Params may be edited by hand (Python's compute_heuristics): counts are split factors and
  // launch dimensions.
  InnerOuterParams::forEachField(params, [&](const char* name, const auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, int64_t>) {
      const std::string_view field_name(name);
      const bool may_be_zero =
          field_name == "row_blocks" || field_name == "row_length" ||
          field_name == "min_blocks_per_sm" || field_name == "reference_output" ||
          field_name == "shared_column_partials" || field_name == "read_only_loads" ||
          field_name == "packed_registers" || field_name == "fixed_row_length";
      BRAZE_USER_CHECK(field >= (may_be_zero ? 0 : 1))
          << "inner_outer params: " << name << " is " << field << ", must be at least "
          << (may_be_zero ? 0 : 1);
    }
  });
  BRAZE_USER_CHECK(params.shared_column_partials <= 1)
      << "inner_outer params: shared_column_partials is " << params.shared_column_partials
      << ", must be 0 (registers) or 1 (shared memory)";
  BRAZE_USER_CHECK(params.read_only_loads <= 2)
      << "inner_outer params: read_only_loads is " << params.read_only_loads
      << ", must be 0 (none), 1 (per-column inputs) or 2 (every input)";
  BRAZE_USER_CHECK(params.packed_registers <= 1)
      << "inner_outer params: packed_registers is " << params.packed_registers
      << ", must be 0 (one element a register) or 1 (two 2-byte elements a register)";
  BRAZE_USER_CHECK(params.fixed_row_length <= 1)
      << "inner_outer params: fixed_row_length is " << params.fixed_row_length
      << ", must be 0 (the block read at run time) or 1 (compiled for row_length)";
  BRAZE_USER_CHECK(params.threads_x * params.rows_per_block <= 1024)
      << "inner_outer params: threads_x * rows_per_block is "
      << params.threads_x * params.rows_per_block << ", more than a block's 1024 threads";
  return params;
}

std::string toString(const InnerOuterParams& params) {
  return sdk::describeParams(params, "inner_outer");
}

std::ostream& operator<<(std::ostream& os, const InnerOuterParams& params) {
  return os << toString(params);
}

uint64_t hashParams(const InnerOuterParams& params) {
  return sdk::hashParams(params);
}

}  // namespace braze::inner_outer
