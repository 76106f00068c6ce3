#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "braze/ir/data_type.h"
#include "braze/ir/fusion.h"
#include "braze/ir/stream_axes.h"
#include "braze/segment/segmented_fusion.h"

namespace braze::host {

class StreamStages;

/// Where a value of a host program lives while it runs: a fusion input, a tensor slot (a buffer
/// the program allocates, or a view that Select makes of one slice of a tensor), an extent it
/// evaluates from the inputs' sizes, or the length of the current slice of a stream loop.
enum class SlotKind : uint8_t { Input, Buffer, Extent, SliceLength };

struct ValueRef {
  SlotKind kind = SlotKind::Input;
  int32_t index = 0;  ///< SliceLength: the loop (HostProgram::loops)
  bool operator==(const ValueRef&) const = default;
};

/// A stream loop: `slices(extent)` iterations, iteration i over elements
/// [i * sliceLength(extent), ...) of the sliced axes, on pool stream i % streams.
struct Loop {
  ValueRef extent;  ///< an Extent slot
  StreamAxis slicing;
  const TensorView* reference = nullptr;  ///< the tensor whose stream axis it runs over
  int32_t streams = 4;
};

/// Allocates tensor slot `buffer` from the stream-ordered pool: a dense tensor of `dtype` in
/// `tensor`'s allocation order whose sizes are the original fusion's `extents` (Index scalars,
/// evaluated from the inputs' sizes).
struct Allocate {
  int32_t buffer = 0;
  DataType dtype = DataType::Float32;
  std::vector<const Val*> extents;
  const TensorView* tensor = nullptr;  ///< the original fusion's tensor it holds
  /// >= 0: the buffer is this fusion input's memory (an output written in place,
  /// Fusion::aliasOutputToInput): nothing is allocated, and the input is what the run returns.
  int32_t alias_input = -1;
  /// A ring for a tensor written and read inside one stream loop: `ring_slots` slices of loop
  /// `ring_loop` along dim `ring_axis`, not the whole tensor. 0: the whole tensor.
  int32_t ring_slots = 0;
  int32_t ring_loop = -1;
  int64_t ring_axis = 0;
  /// Page-locked host memory (from the process's pinned pool) instead of device memory: a
  /// result the program copies back to the host, slice by slice where a loop writes it.
  bool host = false;
};

/// Returns tensor slot `buffer` to the pool in stream order: every launch enqueued before
/// still sees it.
struct Deallocate {
  int32_t buffer = 0;
};

/// Launches the kernel of segment `segment`: `inputs` in the order of the segment fusion's
/// inputs, `outputs` (tensor slots) in the order of its outputs.
struct LaunchKernel {
  int32_t segment = 0;
  std::vector<ValueRef> inputs;
  std::vector<int32_t> outputs;
};

/// Makes tensor slot `view` an alias of the current iteration's slice of `source` along dim
/// `axis`: elements [i * length, ...) of iteration i of loop `loop`, or for a ring (`ring_slots`
/// > 0) slice i % ring_slots of it. No copy; valid until the iteration ends.
struct Select {
  int32_t view = 0;
  ValueRef source;
  int64_t axis = 0;
  int32_t loop = 0;
  int32_t ring_slots = 0;
};

/// Copies `source` into `target` (same shape, both dense), on the current stream.
/// HostToDevice: a fusion input in host memory (or a slice of one) into device memory, how a run
/// whose inputs are host tensors stages them. DeviceToHost: a device tensor (or a slice) into a
/// host buffer (Allocate::host), how such a run returns its results, or into the host input an
/// output is written into (or a slice of it). DeviceToDevice: between two device tensors.
/// Inside a stream loop each copy moves one slice, so the copies of one slice overlap the
/// kernels of another.
enum class CopyDirection : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };

struct Copy {
  ValueRef target;  ///< a tensor slot, or (DeviceToHost) a fusion input
  ValueRef source;
  CopyDirection direction = CopyDirection::HostToDevice;
};

/// A stream: one the program saved (`saved`, a stream slot), the pool stream of the current
/// iteration of loop `loop` (iteration % streams), or with `every` each pool stream loop `loop`
/// used.
struct StreamRef {
  int32_t saved = -1;
  int32_t loop = -1;
  bool every = false;
  bool operator==(const StreamRef&) const = default;
};

/// Saves the stream the program runs on in stream slot `stream`.
struct GetCurrentStream {
  int32_t stream = 0;
};

/// Later instructions enqueue their work on `stream`.
struct SetCurrentStream {
  StreamRef stream;
};

/// The current stream waits for the work enqueued on `stream` so far (an event recorded there
/// and waited on here): the host never blocks.
struct Synchronize {
  StreamRef stream;
};

/// Runs resharding segment `segment` (a `set` that communicationOf describes: an allgather,
/// reduce-scatter, allreduce, all-to-all or a local slice among the devices of a mesh dim):
/// this device's part `input` into tensor slot `output`, enqueued on the current stream. The
/// output may be read only after Wait for the same segment.
struct Communicate {
  int32_t segment = 0;
  ValueRef input;
  int32_t output = 0;
};

/// The current stream waits for the Communicate of segment `segment`: placed before the first
/// instruction that reads its output, so that work between the two overlaps the transfer.
struct Wait {
  int32_t segment = 0;
};

/// Lambdas visiting an Instruction: std::visit(Overloaded{[](const Allocate&) {...}, ...}, i).
template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

struct Instruction;

/// Runs `body` once per iteration of loop `loop` (HostProgram::loops).
struct ForLoop {
  int32_t loop = 0;
  std::vector<Instruction> body;
};

struct Instruction
    : std::variant<Allocate, Deallocate, LaunchKernel, Select, Copy, GetCurrentStream,
                   SetCurrentStream, Synchronize, ForLoop, Communicate, Wait> {
  using variant::variant;
};

/// The plan of a FusionKernelRuntime as a small program that one evaluator runs: allocations,
/// one launch per segment in order, stream loops that launch segments once per slice on a pool
/// of streams, and deallocations once a buffer's last reader has been enqueued (so the pool
/// hands its memory to later allocations of the same run). A one-kernel fusion is
/// Allocate(outputs) + one LaunchKernel.
struct HostProgram {
  const Fusion* original = nullptr;  ///< the fusion whose values the program names
  std::vector<Instruction> instructions;
  int32_t num_buffers = 0;  ///< tensor slots: allocations and views
  int32_t num_streams = 0;  ///< stream slots
  /// Extents the program evaluates (slot Extent i is extents[i]): buffer sizes, loop extents
  /// and the Index scalars segments take as inputs.
  std::vector<const Val*> extents;
  std::vector<Loop> loops;
  /// Where each output of the original fusion is found when the program ends.
  std::vector<ValueRef> outputs;
  /// The outputs come back to the host (HostProgramOptions::host_results): host buffers, or
  /// host inputs written in place.
  bool host_results = false;

  /// BRAZE_DUMP=host_ir: one instruction per line, with the original fusion's names; loop
  /// bodies indented.
  std::string toString() const;
};

/// How a program runs stream loops, and where its inputs live.
struct HostProgramOptions {
  /// Streams in each loop's pool (iteration i runs on stream i % streams).
  int32_t streams = 4;
  /// Per fusion input: true when it is a host tensor the program copies to the device itself
  /// (contiguous, row-major): slice by slice into a ring inside the stream loops that slice it,
  /// when nothing else reads it; otherwise whole, before its first reader. Empty: none.
  std::vector<bool> host_inputs;
  /// Per segment: true for a resharding segment (one `set` between shardings, a sharded
  /// fusion's communication), run as Communicate + Wait instead of a launch. Empty: none.
  std::vector<bool> communications;
  /// With host_inputs: the fusion's outputs come back to host buffers (Allocate::host), or into
  /// the host input an output is written into, each slice copied on its iteration's stream
  /// right after the kernels of the iteration, so the copy back overlaps later slices; the
  /// device buffer of an output nothing else reads outside its loop is then a ring. Outputs
  /// written outside loops are copied whole right after their kernel.
  bool host_results = false;
};

/// The program that runs `segmented`'s segments in an order that respects their data flow and
/// puts a segment that writes into an input (an aliased output) after every other segment that
/// reads that input: each intermediate is allocated before the segment that writes it and
/// freed after its last reader; the original fusion's outputs are allocated and never freed
/// (they are returned), except aliased ones, which are their input's memory. An output that is
/// an input of the original is returned as the input.
///
/// With `stages` (a fusion with stream axes; segments then hold Exprs of one stage each), the
/// segments of a loop stage run in one ForLoop: each iteration switches to its pool stream,
/// waits for the caller's stream, selects the slices its segments read and write, and launches
/// them; after the loop the caller's stream waits for every pool stream. A tensor written and
/// read only inside one loop gets a ring of `streams` slices instead of its whole size.
/// The program is verified (verifyHostProgram) before it is returned.
HostProgram buildHostProgram(const SegmentedFusion& segmented, const StreamStages* stages = nullptr,
                             const HostProgramOptions& options = {});

/// What is wrong with `program`, or nullopt: every tensor slot defined (allocated, or selected
/// inside its loop) before its use and not used after it is freed or its loop ends; every
/// allocation that is not an output freed once, after its last use; views and rings within
/// their base (dims in range, rings read by their own loop); stream slots saved before use,
/// pool streams named inside their loop and joined after it; the caller's stream current again
/// at the end of every loop and of the program.
std::optional<std::string> verifyHostProgram(const HostProgram& program);

/// The stage of each segment of `segmented` (the stage of the Exprs that write its outputs).
std::vector<int32_t> segmentStages(const SegmentedFusion& segmented, const StreamStages& stages);

/// How a segment of loop stage `stage` reads each of its inputs in one iteration: the dim it
/// slices (a tensor), or whole (nullopt); `slice_length[i]` for an Index scalar that is the
/// extent of a sliced dim (it then takes the slice's length).
struct LoopSegmentInputs {
  std::vector<std::optional<int64_t>> sliced_axis;
  std::vector<bool> slice_length;
};
LoopSegmentInputs loopSegmentInputs(const Segment& segment, const StreamStages& stages,
                                    int32_t stage);

}  // namespace braze::host
