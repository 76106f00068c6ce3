// StreamAxis and takeStreamAxes: a definition's ParallelType::Stream axes as tensor attributes.

#include "braze/ir/stream_axes.h"

#include <algorithm>
#include <sstream>

#include "braze/error.h"
#include "braze/ir/fusion.h"

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

std::string label(const TensorView* tv) {
  const int64_t input = tv->fusion().inputIndex(tv);
  return input < 0 ? tv->name() : tv->name() + " (input " + std::to_string(input) + ")";
}

// The StreamAxis that `tv`'s loop domain asks for, checked: its Stream loop axis is a logical
// axis or the outer axis of one split of a logical axis by a constant, and nothing else of the
// loop domain is scheduled.
StreamAxis streamAxisOf(const TensorView* tv, size_t loop_position) {
  const std::vector<IterDomain*>& logical = tv->logical();
  const std::vector<IterDomain*>& loop = tv->loop();
  const IterDomain* id = loop[loop_position];
  const std::string where =
      label(tv) + " loop axis " + std::to_string(loop_position) + " (" + id->name() + ")";
  BRAZE_USER_CHECK(!tv->hasRoot())
      << where << " is stream-parallel, but " << tv->name()
      << " is an rFactor producer; stream-parallelize a tensor of the definition";
  StreamAxis axis;
  std::vector<IterDomain*> expected = logical;
  auto found = std::find(logical.begin(), logical.end(), id);
  if (found != logical.end()) {
    axis.axis = found - logical.begin();
  } else {
    const Expr* split = id->definition();
    const bool outer_of_split = split != nullptr && split->op() == OpKind::Split &&
                                split->output(0) == id && split->input(0)->isA<IterDomain>();
    const IterDomain* source = outer_of_split ? split->input(0)->as<IterDomain>() : nullptr;
    auto source_at = source ? std::find(logical.begin(), logical.end(), source) : logical.end();
    BRAZE_USER_CHECK(source_at != logical.end())
        << where << " is stream-parallel, but its slices are not one stride step of a logical "
        << "axis: it is "
        << (split == nullptr               ? "not derived from the logical domain"
            : split->op() == OpKind::Merge ? "a merge of two axes"
            : split->output(1) == id       ? "the inner axis of a split"
                                           : "a split of an axis that was split already")
        << ". Parallelize a logical axis, or the outer axis of a split of one "
           "(tv->split(axis, slices, false) then parallelize that axis)";
    const std::optional<int64_t> factor = split->input(1)->as<Scalar>()->constantInt();
    BRAZE_USER_CHECK(factor.has_value() && *factor >= 1)
        << where << " is stream-parallel over a split by a symbolic factor; split by a "
        << "constant number of slices or slice length";
    axis.axis = source_at - logical.begin();
    axis.by_count = !split->attribute<bool>("inner_split");
    axis.factor = *factor;
    const auto at = expected.begin() + axis.axis;
    *at = split->output(0)->as<IterDomain>();
    expected.insert(at + 1, split->output(1)->as<IterDomain>());
  }
  const IterDomain* logical_id = logical[static_cast<size_t>(axis.axis)];
  BRAZE_USER_CHECK(logical_id->isIteration())
      << where << " is stream-parallel, but logical axis " << axis.axis << " of " << tv->name()
      << " is a " << logical_id->iterType() << " axis"
      << (logical_id->isReduction()
              ? ": the op reduces over it, so its slices cannot be computed apart. Stream over an "
                "axis the reduction keeps"
              : ": it has one element. Stream over an axis with elements");
  BRAZE_USER_CHECK(loop == expected)
      << label(tv) << " has a stream-parallel axis and other scheduling on its loop domain; a "
      << "definition schedules only its stream axis (the schedulers do the rest)";
  for (size_t i = 0; i < loop.size(); ++i) {
    BRAZE_USER_CHECK(i == loop_position || loop[i]->parallelType() == ParallelType::Serial)
        << label(tv) << " loop axis " << i << " (" << loop[i]->name() << ") is "
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
        << label(tv) << " has two stream-parallel loop axes (" << *position << " and " << i
        << "); a tensor is sliced along one axis";
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
