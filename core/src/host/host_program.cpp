// Building the host program of a segmented fusion: launches in data-flow order, stream loops
// for the segments of loop stages, and the buffers between them.

#include "braze/host/host_program.h"

#include <algorithm>
#include <map>
#include <set>

#include "braze/error.h"
#include "braze/host/stream_stages.h"

namespace braze::host {
namespace {

// The order to launch `segmented`'s segments in: each after the segments whose outputs it
// reads and after every segment of an earlier stage, and a segment that writes an aliased
// output after every other segment that reads the input it writes into; otherwise in segment
// order.
std::vector<size_t> launchOrder(const SegmentedFusion& segmented,
                                const std::vector<int32_t>& stage) {
  const Fusion& original = *segmented.original;
  const size_t count = segmented.segments.size();
  std::map<const Val*, size_t> writer;
  for (size_t s = 0; s < count; ++s) {
    for (const Val* output : segmented.segments[s].outputs) writer[output] = s;
  }
  std::vector<std::set<size_t>> after(count);  // after[s]: segments that must run before s
  for (size_t s = 0; s < count; ++s) {
    for (const Val* input : segmented.segments[s].inputs) {
      auto found = writer.find(input);
      if (found != writer.end()) after[s].insert(found->second);
    }
    for (size_t r = 0; r < count; ++r) {
      if (stage[r] < stage[s]) after[s].insert(r);
    }
  }
  for (const auto& [output, input] : original.outputAliases()) {
    auto found = writer.find(output);
    if (found == writer.end()) continue;
    for (size_t r = 0; r < count; ++r) {
      const std::vector<const Val*>& reads = segmented.segments[r].inputs;
      if (r != found->second && std::find(reads.begin(), reads.end(), input) != reads.end())
        after[found->second].insert(r);
    }
  }
  std::vector<size_t> order;
  std::vector<bool> placed(count, false);
  while (order.size() < count) {
    size_t next = count;
    for (size_t s = 0; s < count && next == count; ++s) {
      if (placed[s]) continue;
      if (std::all_of(after[s].begin(), after[s].end(), [&](size_t p) { return placed[p]; }))
        next = s;
    }
    BRAZE_USER_CHECK(next < count)
        << "no order of the fusion's kernels runs every reader of an input before the kernel "
           "that writes an output into it"
        << (*std::max_element(stage.begin(), stage.end()) > 0
                ? " and every stream loop after what it reads; write the output into the input "
                  "in the last stage that reads the input"
                : "");
    placed[next] = true;
    order.push_back(next);
  }
  return order;
}

class ProgramBuilder {
 public:
  ProgramBuilder(const SegmentedFusion& segmented, const StreamStages* stages,
                 const HostProgramOptions& options)
      : segmented_(segmented), original_(*segmented.original), stages_(stages), options_(options) {
    program_.original = &original_;
    program_.host_results = options.host_results;
    stage_ = stages ? segmentStages(segmented, *stages)
                    : std::vector<int32_t>(segmented.segments.size(), 0);
    order_ = launchOrder(segmented, stage_);
    for (size_t step = 0; step < order_.size(); ++step) {
      for (const Val* input : segmented_.segments[order_[step]].inputs) {
        last_reader_[input] = step;
        readers_[input].push_back(step);
      }
    }
    for (size_t i = 0; i < original_.inputs().size(); ++i)
      where_[original_.inputs()[i]] = {SlotKind::Input, static_cast<int32_t>(i)};
    for (size_t i = 0; i < options.host_inputs.size() && i < original_.inputs().size(); ++i) {
      if (!options.host_inputs[i] || !original_.inputs()[i]->isA<TensorView>()) continue;
      const Val* input = original_.inputs()[i];
      // Staged slice by slice when every reader is a loop that slices it, else whole.
      const std::vector<size_t>& readers = readers_[input];
      const bool sliced = stages_ != nullptr && !readers.empty() &&
                          std::all_of(readers.begin(), readers.end(), [&](size_t step) {
                            const int32_t stage = stage_[order_[step]];
                            return stages_->slicedAxis(*input->as<TensorView>(), stage).has_value();
                          });
      (sliced ? sliced_host_inputs_ : whole_host_inputs_).insert(input);
    }
  }

  HostProgram build() {
    for (size_t begin = 0; begin < order_.size();) {
      const int32_t stage = stage_[order_[begin]];
      size_t end = begin;
      while (end < order_.size() && stage_[order_[end]] == stage) ++end;
      if (stages_ != nullptr && stages_->stages()[static_cast<size_t>(stage)].loop) {
        emitLoop(begin, end, stage);
      } else {
        for (size_t step = begin; step < end; ++step) {
          emitLaunch(step, program_.instructions);
          copyResultsWholeAfter(step);
          freeAfter(step);
        }
      }
      begin = end;
    }
    // The outputs are complete when the program returns.
    std::set<int32_t> unwaited;  // by segment, so the order does not depend on addresses
    for (const auto& [value, segment] : unwaited_) unwaited.insert(segment);
    for (int32_t segment : unwaited) program_.instructions.emplace_back(Wait{segment});
    unwaited_.clear();
    for (const Val* output : original_.outputs()) {
      auto on_host = host_result_.find(output);
      if (on_host != host_result_.end()) {
        program_.outputs.push_back(on_host->second);
        continue;
      }
      auto found = where_.find(output);
      BRAZE_INTERNAL_CHECK(found != where_.end())
          << "buildHostProgram: no segment writes fusion output " << output->name();
      program_.outputs.push_back(found->second);
    }
    return std::move(program_);
  }

 private:
  ValueRef extentRef(const Val* extent) {
    auto [it, inserted] =
        extent_slot_.emplace(extent, static_cast<int32_t>(program_.extents.size()));
    if (inserted) program_.extents.push_back(extent);
    return ValueRef{SlotKind::Extent, it->second};
  }

  // Allocates `output`'s buffer (or its ring in loop `ring_loop`) at the end of `into`.
  // With `staging`, a ring into which a loop copies the slices of host input `output`: the
  // input is still found where it was.
  int32_t allocate(const Val* output, std::vector<Instruction>& into, int32_t ring_loop = -1,
                   int64_t ring_axis = 0, bool staging = false) {
    Allocate allocate = allocationOf(*output->as<TensorView>());
    if (ring_loop >= 0) {
      allocate.ring_slots = program_.loops[static_cast<size_t>(ring_loop)].streams;
      allocate.ring_loop = ring_loop;
      allocate.ring_axis = ring_axis;
    }
    ValueRef ref{SlotKind::Buffer, allocate.buffer};
    // An output written into a host input (host_results) is written on the device first and
    // copied into the input after: a buffer of its own.
    const Val* input = options_.host_results ? nullptr : original_.aliasedInput(output);
    if (input != nullptr) {
      // Later segments read it where it is written: in the input.
      allocate.alias_input = static_cast<int32_t>(original_.inputIndex(input));
      ref = ValueRef{SlotKind::Input, allocate.alias_input};
    }
    BRAZE_INTERNAL_CHECK(staging || where_.emplace(output, ref).second)
        << "buildHostProgram: " << output->name() << " is written by two segments";
    // An output that goes back to the host is an intermediate on the device: freed after
    // its copy and its last reader.
    if (freedOnDevice(output) && ring_loop < 0) live_[allocate.buffer] = output;
    const int32_t buffer = allocate.buffer;
    into.emplace_back(std::move(allocate));
    return buffer;
  }

  // A new slot's allocation of `tv` whole, its extents registered.
  Allocate allocationOf(const TensorView& tv) {
    Allocate allocate;
    allocate.buffer = program_.num_buffers++;
    allocate.dtype = tv.dtype();
    allocate.tensor = &tv;
    for (const IterDomain* id : tv.logicalNoReductions()) {
      allocate.extents.push_back(id->logicalExtent());
      if (!id->logicalExtent()->isConstant()) extentRef(id->logicalExtent());
    }
    return allocate;
  }

  // Whether fusion output `value` is copied back to the host.
  bool returnsToHost(const Val* value) const {
    return options_.host_results && original_.isOutput(value) && !original_.isInput(value);
  }

  // Whether `value`'s device buffer is the program's to free: an intermediate, or an output
  // copied back to the host.
  bool freedOnDevice(const Val* value) const {
    return !original_.isOutput(value) || returnsToHost(value);
  }

  // Where fusion output `output` comes back to: the host input it is written into, or a host
  // buffer allocated (whole, before anything writes it) at the end of the program so far.
  ValueRef hostResult(const Val* output) {
    auto found = host_result_.find(output);
    if (found != host_result_.end()) return found->second;
    ValueRef where;
    if (const Val* input = original_.aliasedInput(output)) {
      where = {SlotKind::Input, static_cast<int32_t>(original_.inputIndex(input))};
    } else {
      Allocate allocate = allocationOf(*output->as<TensorView>());
      allocate.host = true;
      where = {SlotKind::Buffer, allocate.buffer};
      program_.instructions.emplace_back(std::move(allocate));
    }
    host_result_.emplace(output, where);
    return where;
  }

  // The outputs of the segment at `step` (outside loops) that return to the host, copied
  // whole right after its launch, on the caller's stream.
  void copyResultsWholeAfter(size_t step) {
    for (const Val* output : segmented_.segments[order_[step]].outputs) {
      if (!returnsToHost(output)) continue;
      program_.instructions.emplace_back(
          Copy{hostResult(output), where_.at(output), CopyDirection::DeviceToHost});
    }
  }

  bool isCommunication(size_t segment) const {
    return segment < options_.communications.size() && options_.communications[segment];
  }

  // Waits for the communications whose outputs `segment` reads, before it reads them.
  void waitForInputs(const Segment& segment, std::vector<Instruction>& into) {
    for (const Val* input : segment.inputs) {
      auto found = unwaited_.find(input);
      if (found == unwaited_.end()) continue;
      into.emplace_back(Wait{found->second});
      unwaited_.erase(found);
    }
  }

  // The launch of the segment at `step`, its outputs allocated first; for a resharding
  // segment, its Communicate, waited for where its output is first read.
  void emitLaunch(size_t step, std::vector<Instruction>& into) {
    const Segment& segment = segmented_.segments[order_[step]];
    stageWholeInputs(segment);
    waitForInputs(segment, into);
    if (isCommunication(order_[step])) {
      BRAZE_INTERNAL_CHECK(segment.inputs.size() == 1 && segment.outputs.size() == 1)
          << "buildHostProgram: resharding segment " << order_[step]
          << " does not read and write one tensor";
      Communicate communicate;
      communicate.segment = static_cast<int32_t>(order_[step]);
      communicate.input = valueOf(segment.inputs[0]);
      communicate.output = allocate(segment.outputs[0], into);
      into.emplace_back(communicate);
      unwaited_.emplace(segment.outputs[0], communicate.segment);
      return;
    }
    LaunchKernel launch;
    launch.segment = static_cast<int32_t>(order_[step]);
    for (const Val* input : segment.inputs) launch.inputs.push_back(valueOf(input));
    for (const Val* output : segment.outputs) launch.outputs.push_back(allocate(output, into));
    into.emplace_back(std::move(launch));
  }

  // Host inputs `segment` reads whole: copied to a device buffer before their first reader,
  // on the caller's stream; later readers read that buffer, freed after the last one.
  void stageWholeInputs(const Segment& segment) {
    for (const Val* input : segment.inputs) {
      if (whole_host_inputs_.erase(input) == 0) continue;
      const ValueRef host = where_.at(input);
      where_.erase(input);
      const int32_t buffer = allocate(input, program_.instructions);
      program_.instructions.emplace_back(
          Copy{{SlotKind::Buffer, buffer}, host, CopyDirection::HostToDevice});
    }
  }

  ValueRef valueOf(const Val* input) {
    auto found = where_.find(input);
    if (found != where_.end()) return found->second;
    BRAZE_INTERNAL_CHECK(input->isA<Scalar>())
        << "buildHostProgram: a segment reads " << input->name() << ", which no earlier segment "
        << "writes";
    return extentRef(input);
  }

  // Frees the intermediates whose last reader is at `step` or earlier.
  void freeAfter(size_t step) {
    for (auto it = live_.begin(); it != live_.end();) {
      auto reader = last_reader_.find(it->second);
      if (reader == last_reader_.end() || reader->second <= step) {
        program_.instructions.emplace_back(Deallocate{it->first});
        it = live_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // The segments at steps [begin, end), all of loop stage `stage`, as one ForLoop.
  void emitLoop(size_t begin, size_t end, int32_t stage) {
    const StreamStage& info = stages_->stages()[static_cast<size_t>(stage)];
    const auto loop_id = static_cast<int32_t>(program_.loops.size());
    program_.loops.push_back(
        {extentRef(stages_->extentOf(stage)), info.slicing, info.reference, options_.streams});
    if (program_.num_streams == 0) {
      program_.instructions.emplace_back(GetCurrentStream{0});
      program_.num_streams = 1;
    }
    for (size_t step = begin; step < end; ++step)
      stageWholeInputs(segmented_.segments[order_[step]]);
    // Tensors the loop writes: whole when something outside reads them (or they are outputs),
    // else a ring of one slice per pool stream.
    std::vector<int32_t> rings;
    std::map<int32_t, bool> is_ring;  // by buffer
    for (size_t step = begin; step < end; ++step) {
      for (const Val* output : segmented_.segments[order_[step]].outputs) {
        const std::optional<int64_t> axis = stages_->slicedAxis(*output->as<TensorView>(), stage);
        BRAZE_INTERNAL_CHECK(axis.has_value())
            << "buildHostProgram: " << output->name() << " is written in a stream loop but has "
            << "no dim mapped to its axis";
        const std::vector<size_t>& readers = readers_[output];
        const bool inside =
            freedOnDevice(output) && std::all_of(readers.begin(), readers.end(),
                                                 [&](size_t r) { return r >= begin && r < end; });
        const int32_t buffer =
            allocate(output, program_.instructions, inside ? loop_id : -1, inside ? *axis : 0);
        if (inside) rings.push_back(buffer);
        is_ring[buffer] = inside;
        if (returnsToHost(output)) hostResult(output);
      }
    }
    ForLoop loop;
    loop.loop = loop_id;
    loop.body.emplace_back(SetCurrentStream{StreamRef{-1, loop_id, false}});
    loop.body.emplace_back(Synchronize{StreamRef{0, -1, false}});
    std::map<std::pair<int32_t, int32_t>, int32_t> views;  // by (kind, index) of the source
    auto select = [&](const ValueRef& source, int64_t axis, int32_t ring_slots) {
      const int32_t view = program_.num_buffers++;
      loop.body.emplace_back(Select{view, source, axis, loop_id, ring_slots});
      return view;
    };
    auto viewOf = [&](const ValueRef& source, int64_t axis) {
      const auto key = std::make_pair(static_cast<int32_t>(source.kind), source.index);
      auto found = views.find(key);
      if (found != views.end()) return found->second;
      const Val* host = source.kind == SlotKind::Input
                            ? original_.inputs()[static_cast<size_t>(source.index)]
                            : nullptr;
      if (host != nullptr && sliced_host_inputs_.count(host) != 0) {
        // This iteration's slice of a host input, copied into its slot of a device ring.
        const int32_t ring = allocate(host, program_.instructions, loop_id, axis, /*staging=*/true);
        rings.push_back(ring);
        is_ring[ring] = true;
        const int32_t from = select(source, axis, 0);
        const int32_t into = select({SlotKind::Buffer, ring}, axis, options_.streams);
        loop.body.emplace_back(
            Copy{{SlotKind::Buffer, into}, {SlotKind::Buffer, from}, CopyDirection::HostToDevice});
        views.emplace(key, into);
        return into;
      }
      const bool ring = source.kind == SlotKind::Buffer && is_ring[source.index];
      const int32_t view = select(source, axis, ring ? options_.streams : 0);
      views.emplace(key, view);
      return view;
    };
    std::set<int32_t> loop_steps;  // resharding segments of this loop
    for (size_t step = begin; step < end; ++step) {
      const Segment& segment = segmented_.segments[order_[step]];
      const LoopSegmentInputs reads = loopSegmentInputs(segment, *stages_, stage);
      waitForInputs(segment, loop.body);
      if (isCommunication(order_[step])) {
        // This iteration's slice, communicated into this iteration's slice of the result.
        Communicate communicate;
        communicate.segment = static_cast<int32_t>(order_[step]);
        const ValueRef whole = valueOf(segment.inputs[0]);
        communicate.input = reads.sliced_axis[0]
                                ? ValueRef{SlotKind::Buffer, viewOf(whole, *reads.sliced_axis[0])}
                                : whole;
        const Val* output = segment.outputs[0];
        const std::optional<int64_t> axis = stages_->slicedAxis(*output->as<TensorView>(), stage);
        communicate.output = viewOf(where_.at(output), *axis);
        loop.body.emplace_back(communicate);
        unwaited_.emplace(output, communicate.segment);
        loop_steps.insert(communicate.segment);
        continue;
      }
      LaunchKernel launch;
      launch.segment = static_cast<int32_t>(order_[step]);
      for (size_t i = 0; i < segment.inputs.size(); ++i) {
        const ValueRef whole = valueOf(segment.inputs[i]);
        if (reads.slice_length[i]) {
          launch.inputs.push_back({SlotKind::SliceLength, loop_id});
        } else if (reads.sliced_axis[i]) {
          launch.inputs.push_back({SlotKind::Buffer, viewOf(whole, *reads.sliced_axis[i])});
        } else {
          launch.inputs.push_back(whole);
        }
      }
      for (const Val* output : segment.outputs) {
        const std::optional<int64_t> axis = stages_->slicedAxis(*output->as<TensorView>(), stage);
        launch.outputs.push_back(viewOf(where_.at(output), *axis));
      }
      loop.body.emplace_back(std::move(launch));
    }
    // Results back to the host: this iteration's slices, after every kernel of the iteration
    // (on its stream), while other iterations compute.
    for (size_t step = begin; step < end; ++step) {
      for (const Val* output : segmented_.segments[order_[step]].outputs) {
        if (!returnsToHost(output)) continue;
        const int64_t axis = *stages_->slicedAxis(*output->as<TensorView>(), stage);
        const int32_t device = viewOf(where_.at(output), axis);
        const int32_t host = select(host_result_.at(output), axis, 0);
        loop.body.emplace_back(Copy{
            {SlotKind::Buffer, host}, {SlotKind::Buffer, device}, CopyDirection::DeviceToHost});
      }
    }
    // A slice communicated and not read in the loop is complete before its iteration ends.
    for (auto it = unwaited_.begin(); it != unwaited_.end();) {
      if (loop_steps.count(it->second) == 0) {
        ++it;
        continue;
      }
      loop.body.emplace_back(Wait{it->second});
      it = unwaited_.erase(it);
    }
    program_.instructions.emplace_back(std::move(loop));
    program_.instructions.emplace_back(SetCurrentStream{StreamRef{0, -1, false}});
    program_.instructions.emplace_back(Synchronize{StreamRef{-1, loop_id, true}});
    for (int32_t ring : rings) program_.instructions.emplace_back(Deallocate{ring});
    freeAfter(end - 1);
  }

  const SegmentedFusion& segmented_;
  const Fusion& original_;
  const StreamStages* stages_;
  const HostProgramOptions& options_;
  HostProgram program_;
  std::vector<int32_t> stage_;
  std::vector<size_t> order_;
  std::map<const Val*, ValueRef> where_;
  std::map<const Val*, int32_t> extent_slot_;
  std::map<const Val*, size_t> last_reader_;
  std::map<const Val*, std::vector<size_t>> readers_;
  std::map<int32_t, const Val*> live_;          // buffers that hold intermediates, by buffer
  std::map<const Val*, int32_t> unwaited_;      // communicated tensors, by segment, not waited for
  std::set<const Val*> whole_host_inputs_;      // host inputs copied whole, not yet copied
  std::set<const Val*> sliced_host_inputs_;     // host inputs copied slice by slice in loops
  std::map<const Val*, ValueRef> host_result_;  // where outputs come back (host_results)
};

}  // namespace

HostProgram buildHostProgram(const SegmentedFusion& segmented, const StreamStages* stages,
                             const HostProgramOptions& options) {
  BRAZE_INTERNAL_CHECK(segmented.original != nullptr) << "buildHostProgram: no original fusion";
  BRAZE_USER_CHECK(options.streams >= 1)
      << "a stream loop runs on a pool of at least one stream, not " << options.streams;
  HostProgram program = ProgramBuilder(segmented, stages, options).build();
  const std::optional<std::string> problem = verifyHostProgram(program);
  BRAZE_INTERNAL_CHECK(!problem.has_value())
      << "buildHostProgram made an invalid program (" << *problem << "):\n"
      << program.toString();
  return program;
}

std::vector<int32_t> segmentStages(const SegmentedFusion& segmented, const StreamStages& stages) {
  std::vector<int32_t> result;
  for (const Segment& segment : segmented.segments) {
    int32_t stage = -1;
    for (const Val* output : segment.outputs) {
      const int32_t of = stages.stageOf(*output->definition());
      BRAZE_INTERNAL_CHECK(stage < 0 || of == stage)
          << "segment " << segment.id << " writes tensors of stream stages " << stage << " and "
          << of;
      stage = of;
    }
    result.push_back(std::max(stage, 0));
  }
  return result;
}

LoopSegmentInputs loopSegmentInputs(const Segment& segment, const StreamStages& stages,
                                    int32_t stage) {
  LoopSegmentInputs reads;
  std::set<const Val*> sliced_extents = {stages.extentOf(stage)};
  auto noteSliced = [&](const TensorView& tv, int64_t axis) {
    sliced_extents.insert(tv.logicalNoReductions()[static_cast<size_t>(axis)]->logicalExtent());
  };
  for (const Val* input : segment.inputs) {
    std::optional<int64_t> axis;
    if (const auto* tv = input->dynCast<TensorView>()) {
      axis = stages.slicedAxis(*tv, stage);
      if (axis) noteSliced(*tv, *axis);
    }
    reads.sliced_axis.push_back(axis);
  }
  for (const Val* output : segment.outputs) {
    const auto* tv = output->as<TensorView>();
    if (std::optional<int64_t> axis = stages.slicedAxis(*tv, stage)) noteSliced(*tv, *axis);
  }
  for (const Val* input : segment.inputs)
    reads.slice_length.push_back(input->isA<Scalar>() && sliced_extents.count(input) != 0);
  return reads;
}

}  // namespace braze::host
