#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "braze/ir/scalar_value.h"
#include "braze/runtime/device_tensor.h"

namespace braze {

/// What a launch of a compiled kernel depends on besides the data: each input's dtype, device,
/// sizes, strides and whether it has storage, or a scalar input's value, in order. Two
/// argument lists with equal signatures validate alike and get the same launch plan; data
/// pointers are not part of it (the alignment vector accesses need is checked at every launch,
/// when the arguments are packed). KernelExecutor::run reuses its last plan for an equal
/// signature: validating the arguments and evaluating the launch took ~9 us of host time.
class ArgumentSignature {
 public:
  explicit ArgumentSignature(const std::vector<std::variant<DeviceTensor, ScalarValue>>& arguments);
  bool operator==(const ArgumentSignature& other) const = default;

 private:
  std::vector<int64_t> words_;
  std::vector<ScalarValue> scalars_;
};

}  // namespace braze
