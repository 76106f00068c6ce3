#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "braze/eval/host_tensor.h"
#include "braze/ir/scalar_value.h"
#include "braze/runtime/device_tensor.h"

namespace braze {

/// A run's arguments reduced to what the executor cache looks up by, as a flat list of words
/// with its hash. Two granularities:
///  - exact(): kind, dtype, device, sizes, strides, data alignment class and scalar values of
///    every argument: equal keys get the same frozen plan;
///  - signature(): sizes left out, only which dims are size 1 (broadcast pattern), the stride
///    order and contiguity: equal signatures may share a runtime (kernels and segmentation).
/// `options` (the run's scheduler choices, as text) is part of both.
class RunKey {
 public:
  template <typename Argument>
  static RunKey exact(const std::vector<Argument>& arguments, std::string_view options);
  template <typename Argument>
  static RunKey signature(const std::vector<Argument>& arguments, std::string_view options);

  bool operator==(const RunKey& other) const {
    return hash_ == other.hash_ && words_ == other.words_;
  }
  size_t hash() const { return hash_; }
  struct Hash {
    size_t operator()(const RunKey& key) const { return key.hash_; }
  };

 private:
  template <typename Argument>
  static RunKey of(const std::vector<Argument>& arguments, std::string_view options, bool exact);
  void addTensor(int64_t kind, DataType dtype, int64_t device, const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides, uint64_t data, bool exact);
  void addScalar(const ScalarValue& value, bool exact);
  void finish(std::string_view options);

  std::vector<int64_t> words_;
  size_t hash_ = 0;
};

// ---- implementation

template <typename Argument>
RunKey RunKey::of(const std::vector<Argument>& arguments, std::string_view options, bool exact) {
  RunKey key;
  key.words_.reserve(arguments.size() * 8 + 2);
  for (const Argument& argument : arguments) {
    if (const auto* device = std::get_if<DeviceTensor>(&argument)) {
      key.addTensor(1, device->dtype(), device->device(), device->sizes(), device->strides(),
                    device->data(), exact);
    } else if (const auto* host = std::get_if<HostTensor>(&argument)) {
      // Copied to a fresh device allocation: aligned for every vector access.
      key.addTensor(2, host->dtype(), -1, host->sizes(), host->strides(), 16, exact);
    } else {
      key.addScalar(std::get<ScalarValue>(argument), exact);
    }
  }
  key.finish(options);
  return key;
}

template <typename Argument>
RunKey RunKey::exact(const std::vector<Argument>& arguments, std::string_view options) {
  return of(arguments, options, true);
}

template <typename Argument>
RunKey RunKey::signature(const std::vector<Argument>& arguments, std::string_view options) {
  return of(arguments, options, false);
}

}  // namespace braze
