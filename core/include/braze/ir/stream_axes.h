#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braze {

class Fusion;
class TensorView;

/// A tensor's stream-parallel axis: the runtime computes the tensor in slices along this axis,
/// one host-loop iteration per slice, iterations on a pool of streams (host/stream_stages.h).
/// A user asks for it with `tv->parallelize(axis, ParallelType::Stream)` on a logical axis (one
/// index per slice) or on the outer axis of a split of one (`split(axis, 4, false)`: four
/// slices; `split(axis, 256)`: slices of 256, the last one shorter where 256 does not divide the
/// extent); takeStreamAxes turns that into this attribute before segmentation.
struct StreamAxis {
  int64_t axis = 0;       ///< position in the tensor's logical domain
  bool by_count = false;  ///< factor is the number of slices, else the elements per slice
  int64_t factor = 1;

  /// The elements of each slice but the last for an axis of `extent` (at least 1).
  int64_t sliceLength(int64_t extent) const;
  /// The number of slices (loop iterations) for an axis of `extent`.
  int64_t slices(int64_t extent) const;
  /// Same slicing (axis positions aside): loops over mapped axes with the same slicing merge.
  bool sameSlicing(const StreamAxis& other) const {
    return by_count == other.by_count && factor == other.factor;
  }
  /// "axis 0 in 4 slices", "axis 0 in slices of 256", "axis 0 per index".
  std::string toString() const;
  bool operator==(const StreamAxis&) const = default;
};

/// The stream axis `tv` has (its attribute) or asks for (a ParallelType::Stream loop axis,
/// checked as takeStreamAxes checks it), or nullopt.
std::optional<StreamAxis> requestedStreamAxis(const TensorView& tv);

/// For every tensor of `fusion` with a loop axis parallelized as ParallelType::Stream: records
/// the StreamAxis and resets the loop domain to the logical domain, so that the definition is
/// unscheduled again for segmentation. Refuses, naming the tensor and the axis, a stream axis
/// whose slices are not one stride step of a logical axis (the inner axis of a split, a merged
/// axis, a split of a split), a split by a symbolic factor, and any other scheduling on a
/// tensor with a stream axis. Returns the tensors that have one.
std::vector<TensorView*> takeStreamAxes(Fusion& fusion);

}  // namespace braze
