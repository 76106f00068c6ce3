// StreamAxis and takeStreamAxes: a definition's ParallelType::Stream axes as tensor attributes.

#include "braze/ir/stream_axes.h"

#include <algorithm>
#include <sstream>

#include "braze/error.h"
#include "braze/ir/fusion.h"
#include "ir/loop_axis_origin.h"

namespace braze {

int64_t StreamAxis::sliceLength(int64_t extent) const {
  if (!by_count) return std::max<int64_t>(factor, 1);
  return std::max<int64_t>((extent + factor - 1) / factor, 1);
}

int64_t StreamAxis::slices(int64_t extent) const {
  if (extent <= 0) return 0;
  const int64_t length = sliceLength(extent);
  return (extent + length - 1) / length;
}

std::string StreamAxis::toString() const {
  std::ostringstream os;
  os << "axis " << axis;
  if (by_count) {
    os << " in " << factor << " slices";
  } else if (factor == 1) {
    os << " per index";
  } else {
    os << " in slices of " << factor;
  }
  return os.str();
}

namespace {

bool isDeviceAxis(const IterDomain* id) {
  return id->parallelType() == ParallelType::DIDx || id->parallelType() == ParallelType::DIDy;
}

// The StreamAxis that `tv`'s loop domain asks for, checked: its Stream loop axis is a logical
// axis or the outer axis of one split of a logical axis by a constant, and nothing else of the
// loop domain is scheduled.
StreamAxis streamAxisOf(const TensorView* tv, size_t loop_position) {
  const std::vector<IterDomain*>& logical = tv->logical();
  const std::vector<IterDomain*>& loop = tv->loop();
  const IterDomain* id = loop[loop_position];
  const std::string where = ir_detail::tensorLabel(tv) + " loop axis " +
                            std::to_string(loop_position) + " (" + id->name() + ")";
  BRAZE_USER_CHECK(!tv->hasRoot())
      << where << " is stream-parallel, but " << tv->name()
      << " is an rFactor producer; stream-parallelize a tensor of the definition";
  const ir_detail::LoopAxisOriginOrReason origin = ir_detail::loopAxisOrigin(tv, id);
  BRAZE_USER_CHECK(origin.origin.has_value())
      << where << " is stream-parallel, but its slices are not one stride step of a logical "
      << "axis: it is " << origin.reason
      << ". Parallelize a logical axis, or the outer axis of a split of one "
         "(tv->split(axis, slices, false) then parallelize that axis)";
  StreamAxis axis;
  axis.axis = origin.origin->logical_axis;
  std::vector<IterDomain*> expected = logical;
  if (origin.origin->split != nullptr) {
    const std::optional<int64_t> factor = origin.origin->constant_factor;
    BRAZE_USER_CHECK(factor.has_value() && *factor >= 1)
        << where << " is stream-parallel over a split by a symbolic factor; split by a "
        << "constant number of slices or slice length";
    axis.by_count = origin.origin->by_count;
    axis.factor = *factor;
    ir_detail::replaceBySplit(expected, tv, *origin.origin);
  }
  const IterDomain* logical_id = logical[static_cast<size_t>(axis.axis)];
  BRAZE_USER_CHECK(logical_id->isIteration())
      << where << " is stream-parallel, but logical axis " << axis.axis << " of " << tv->name()
      << " is a " << logical_id->iterType() << " axis"
      << (logical_id->isReduction()
              ? ": the op reduces over it, so its slices cannot be computed apart. Stream over an "
                "axis the reduction keeps"
              : ": it has one element. Stream over an axis with elements");
  // Device axes of a sharded tensor may stand beside it: takeShardings checks and takes them.
  for (const IterDomain* other : loop) {
    if (!isDeviceAxis(other)) continue;
    const ir_detail::LoopAxisOriginOrReason device = ir_detail::loopAxisOrigin(tv, other);
    if (device.origin && device.origin->split != nullptr)
      ir_detail::replaceBySplit(expected, tv, *device.origin);
  }
  BRAZE_USER_CHECK(loop == expected)
      << ir_detail::tensorLabel(tv)
      << " has a stream-parallel axis and other scheduling on its loop domain; a "
      << "definition schedules only its stream axis and sharded axes (the schedulers do the rest)";
  for (size_t i = 0; i < loop.size(); ++i) {
    BRAZE_USER_CHECK(i == loop_position || loop[i]->parallelType() == ParallelType::Serial ||
                     isDeviceAxis(loop[i]))
        << ir_detail::tensorLabel(tv) << " loop axis " << i << " (" << loop[i]->name() << ") is "
        << loop[i]->parallelType() << " beside its stream axis; a definition parallelizes only "
        << "its stream axis";
  }
  return axis;
}

// The loop position of `tv`'s ParallelType::Stream axis, if it has one.
std::optional<size_t> streamLoopPosition(const TensorView* tv) {
  const std::vector<IterDomain*>& loop = tv->loop();
  std::optional<size_t> position;
  for (size_t i = 0; i < loop.size(); ++i) {
    if (loop[i]->parallelType() != ParallelType::Stream) continue;
    BRAZE_USER_CHECK(!position.has_value())
        << ir_detail::tensorLabel(tv) << " has two stream-parallel loop axes (" << *position
        << " and " << i << "); a tensor is sliced along one axis";
    position = i;
  }
  return position;
}

}  // namespace

std::optional<StreamAxis> requestedStreamAxis(const TensorView& tv) {
  if (tv.streamAxis()) return tv.streamAxis();
  const std::optional<size_t> position = streamLoopPosition(&tv);
  if (!position) return std::nullopt;
  return streamAxisOf(&tv, *position);
}

std::vector<TensorView*> takeStreamAxes(Fusion& fusion) {
  std::vector<TensorView*> streamed;
  for (TensorView* tv : fusion.allTensors()) {
    const std::optional<size_t> position = streamLoopPosition(tv);
    if (!position) continue;
    const std::vector<IterDomain*>& loop = tv->loop();
    const StreamAxis axis = streamAxisOf(tv, *position);
    loop[*position]->parallelize(ParallelType::Serial);
    tv->setLoop(tv->logical());
    tv->setStreamAxis(axis);
    streamed.push_back(tv);
  }
  return streamed;
}

}  // namespace braze
