#pragma once

// Which parts of a host program one device runs. A single-device program runs everything; a
// sharded one whose tensors live on several meshes (pipeline stages) runs on each device only the
// regions and buffers of the meshes that hold it.

#include <cstdint>
#include <functional>

#include "braze/host/host_program.h"
#include "braze/ir/tensor_view.h"

namespace braze::runtime_detail {

struct ProgramPlacement {
  /// Whether this device runs compute segment `segment`; unset: every segment.
  std::function<bool(int32_t segment)> runs;
  /// Whether this device holds tensor `tensor` (its buffer is allocated and returned here);
  /// unset: every tensor.
  std::function<bool(const TensorView& tensor)> holds;

  bool runsSegment(int32_t segment) const { return !runs || runs(segment); }
  bool holdsTensor(const TensorView& tensor) const { return !holds || holds(tensor); }
  /// Whether this device holds the buffer `allocate` made (null: a slot with no allocation,
  /// an input: yes).
  bool holdsBuffer(const host::Allocate* allocate) const {
    return allocate == nullptr || holdsTensor(*allocate->tensor);
  }
};

}  // namespace braze::runtime_detail
