// NcclCollectives: resharding steps on device tensors, one NCCL collective each. NCCL moves
// flat buffers split into equal consecutive blocks (block k to or from rank k); a part along an
// axis that is not the outermost is many strided runs, so it is packed into or unpacked from a
// block with one 2-D device copy per part.

#include <cuda.h>

#include <numeric>

#include "braze/driver/cuda_driver.h"
#include "braze/error.h"
#include "braze/eval/strided_layout.h"
#include "braze/host/collectives.h"
#include "braze/host/communicator.h"

namespace braze::host {

DeviceTensor Collectives::runOnDevice(const Communication& communication,
                                      const std::vector<int64_t>& /*team*/,
                                      const DeviceTensor& /*input*/, CUstream /*stream*/,
                                      const DeviceTensor* /*into*/, Overlap /*overlap*/) {
  BRAZE_USER_CHECK(false) << communication.toString()
                          << ": these collectives run on host tensors; give the sharded run "
                             "host tensors, or run it with NCCL collectives (a Communicator)";
  return {};
}

std::optional<DeviceTensor> Collectives::sendRecvOnDevice(const Communication& communication,
                                                          const DeviceTensor* part,
                                                          const DeviceTensor* into,
                                                          CUstream stream) {
  return runOnDevice(communication, {}, part ? *part : DeviceTensor(), stream, into);  // refused
}

namespace {

// A dense tensor seen, in its memory order, as [outer, n parts of `part` elements along the
// axis, inner]: part k is `outer` runs of `run_bytes`, `pitch_bytes` apart.
struct PartLayout {
  size_t outer = 1;
  size_t run_bytes = 0;    // one part's stretch along the axis, times what is inside it
  size_t pitch_bytes = 0;  // the whole axis' stretch
  size_t partBytes() const { return outer * run_bytes; }
  bool contiguousParts() const { return outer == 1; }
};

// `order`: dims from outermost to innermost in memory; empty: row-major.
PartLayout layoutOf(const std::vector<int64_t>& sizes, int64_t axis, int64_t parts, DataType dtype,
                    const std::vector<int64_t>& order = {}) {
  PartLayout layout;
  size_t inner = static_cast<size_t>(sizeInBytes(dtype));
  bool past_axis = false;
  for (size_t position = 0; position < sizes.size(); ++position) {
    const int64_t d = order.empty() ? static_cast<int64_t>(position) : order[position];
    const auto size = static_cast<size_t>(sizes[static_cast<size_t>(d)]);
    if (d == axis) {
      past_axis = true;
    } else if (past_axis) {
      inner *= size;
    } else {
      layout.outer *= size;
    }
  }
  const auto along = static_cast<size_t>(sizes[static_cast<size_t>(axis)]);
  layout.run_bytes = along / static_cast<size_t>(parts) * inner;
  layout.pitch_bytes = along * inner;
  return layout;
}

void copy2D(CUdeviceptr source, size_t source_pitch, CUdeviceptr target, size_t target_pitch,
            size_t width, size_t height, CUstream stream) {
  if (width == 0 || height == 0) return;
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = source;
  copy.srcPitch = source_pitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = target;
  copy.dstPitch = target_pitch;
  copy.WidthInBytes = width;
  copy.Height = height;
  BRAZE_CU(memcpy2DAsync, &copy, stream);
}

// Part k of `whole` (along the layout's axis) into block k of `blocks`, for every k.
void pack(CUdeviceptr whole, const PartLayout& layout, int64_t parts, CUdeviceptr blocks,
          CUstream stream) {
  for (int64_t k = 0; k < parts; ++k) {
    copy2D(whole + static_cast<size_t>(k) * layout.run_bytes, layout.pitch_bytes,
           blocks + static_cast<size_t>(k) * layout.partBytes(), layout.run_bytes, layout.run_bytes,
           layout.outer, stream);
  }
}

// Block k of `blocks` into part k of `whole`, for every k.
void unpack(CUdeviceptr blocks, const PartLayout& layout, int64_t parts, CUdeviceptr whole,
            CUstream stream) {
  for (int64_t k = 0; k < parts; ++k) {
    copy2D(blocks + static_cast<size_t>(k) * layout.partBytes(), layout.run_bytes,
           whole + static_cast<size_t>(k) * layout.run_bytes, layout.pitch_bytes, layout.run_bytes,
           layout.outer, stream);
  }
}

ReduceOp reduceOpOf(const Communication& communication) {
  switch (communication.reduction) {
    case OpKind::Sum:
      return ReduceOp::Sum;
    case OpKind::Prod:
      return ReduceOp::Product;
    case OpKind::Max:
      return ReduceOp::Max;
    case OpKind::Min:
      return ReduceOp::Min;
    default:
      break;
  }
  BRAZE_INTERNAL_CHECK(false) << communication.toString() << ": no NCCL reduction";
  return ReduceOp::Sum;
}

std::string listOf(const std::vector<int64_t>& devices) {
  std::string text = "{";
  for (size_t i = 0; i < devices.size(); ++i) text += (i ? ", " : "") + std::to_string(devices[i]);
  return text + "}";
}

// The length of each device's part along dim `axis` of `sizes`, split in `n`.
int64_t partLength(const Communication& communication, const std::vector<int64_t>& sizes,
                   int64_t axis, int64_t n) {
  const int64_t along = sizes[static_cast<size_t>(axis)];
  BRAZE_USER_CHECK(along % n == 0) << communication.toString() << ": dim " << axis << " has "
                                   << along << " elements, not a multiple of " << n;
  return along / n;
}

// A dense tensor in stream-ordered memory of `stream`: a plain allocation's free would wait
// for the device, stalling every stream of a pipelined loop.
DeviceTensor emptyOn(DataType dtype, std::vector<int64_t> sizes, int device, CUstream stream,
                     const std::vector<int64_t>& order = {}) {
  return DeviceTensor::emptyOnStream(dtype, std::move(sizes), order, device, stream);
}

std::vector<int64_t> withAxis(std::vector<int64_t> sizes, int64_t axis, int64_t size) {
  sizes[static_cast<size_t>(axis)] = size;
  return sizes;
}

}  // namespace

NcclCollectives::NcclCollectives(Communicator& communicator) : communicator_(communicator) {}

int64_t NcclCollectives::device() const {
  return communicator_.rank();
}

HostTensor NcclCollectives::run(const Communication& communication,
                                const std::vector<int64_t>& /*team*/, const HostTensor& /*input*/) {
  BRAZE_USER_CHECK(false) << communication.toString()
                          << ": NCCL moves GPU memory, but this part is a host tensor; run the "
                             "sharded fusion on device tensors";
  return {};
}

namespace {

// Ranks 0 .. n - 1.
std::vector<int64_t> allRanks(int64_t n) {
  std::vector<int64_t> ranks(static_cast<size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

}  // namespace

// A step's teams get communicators of their own (a mesh dim of a 2-D mesh, or the mesh of a
// pipeline stage that holds some of the ranks), split off the communicator of every rank.
// The split is collective over every rank: each reaches the first step over this mesh dim at
// the same point of the same program, members with their team and the others (through skip())
// with none, so every rank splits once per mesh dim, in the same order.
NcclCollectives::TeamKey NcclCollectives::keyOf(const Communication& communication) {
  return {communication.mesh.devices(), communication.mesh.shape(), communication.mesh_dim};
}

Communicator& NcclCollectives::communicatorFor(const Communication& communication,
                                               const std::vector<int64_t>& team) {
  if (team == allRanks(communicator_.size())) return communicator_;
  std::optional<Communicator>& sub = teams_[keyOf(communication)];
  if (!sub) {
    sub = communicator_.split(team);
  } else {
    BRAZE_INTERNAL_CHECK(sub->size() == static_cast<int64_t>(team.size()))
        << communication.toString() << ": team " << listOf(team) << " of another size";
  }
  // Teams move allgathers as the whole communicator does (every rank sets it alike).
  sub->setAllgatherTransport(communicator_.allgatherTransport());
  return *sub;
}

std::optional<DeviceTensor> NcclCollectives::sendRecvOnDevice(const Communication& communication,
                                                              const DeviceTensor* part,
                                                              const DeviceTensor* into,
                                                              CUstream stream) {
  // Point to point on the communicator of every rank: a part, whole, into the receiver's memory
  // of the same sizes (`into`, which a receiver that holds no part must give).
  const SendRecvRoles roles = sendRecvRoles(communication, communicator_.rank());
  const bool sends = roles.send_to.has_value();
  const bool receives = roles.receive_from.has_value();
  if (sends) {
    BRAZE_INTERNAL_CHECK(part != nullptr)
        << communication.toString() << ": rank " << communicator_.rank() << " sends no part";
    BRAZE_USER_CHECK(part->isContiguous()) << communication.toString() << ": this device's part "
                                           << part->describe() << " is not dense row-major";
  }
  if (!receives) {
    if (sends) {
      communicator_.sendRecv(part->data(), roles.send_to, 0, std::nullopt,
                             static_cast<size_t>(part->numel()), part->dtype(), stream);
    }
    return std::nullopt;
  }
  DeviceTensor received;
  if (into != nullptr &&
      (part == nullptr || (into->dtype() == part->dtype() && into->sizes() == part->sizes())))
    received = *into;
  BRAZE_INTERNAL_CHECK(received.defined() || part != nullptr)
      << communication.toString() << ": rank " << communicator_.rank()
      << " receives without a buffer";
  if (!received.defined()) received = emptyOn(part->dtype(), part->sizes(), part->device(), stream);
  BRAZE_INTERNAL_CHECK(received.isContiguous())
      << communication.toString() << ": rank " << communicator_.rank()
      << " receives into a buffer that is not dense";
  const auto count = static_cast<size_t>(received.numel());
  if (*roles.receive_from == communicator_.rank()) {
    // The same device at one position of both meshes keeps its part.
    const size_t bytes = count * static_cast<size_t>(sizeInBytes(received.dtype()));
    if (received.data() != part->data())
      copy2D(part->data(), bytes, received.data(), bytes, bytes, 1, stream);
    return received;
  }
  communicator_.sendRecv(sends ? part->data() : 0, roles.send_to, received.data(),
                         roles.receive_from, count, received.dtype(), stream);
  return received;
}

void NcclCollectives::skip(const Communication& communication) {
  if (communication.kind == Communication::Kind::SendRecv) return;  // the whole communicator
  const std::vector<int64_t> devices = communication.mesh.devices();
  if (static_cast<int64_t>(devices.size()) == communicator_.size()) {
    // Every rank is on the mesh: this rank is on it too and runs the step.
    return;
  }
  const TeamKey key = keyOf(communication);
  if (teams_.count(key) != 0) return;
  (void)communicator_.split({});  // in no team: NCCL_SPLIT_NOCOLOR
  teams_[key] = std::nullopt;
}

DeviceTensor NcclCollectives::runOnDevice(const Communication& communication,
                                          const std::vector<int64_t>& team,
                                          const DeviceTensor& input, CUstream stream,
                                          const DeviceTensor* into, Overlap overlap) {
  BRAZE_INTERNAL_CHECK(communication.kind != Communication::Kind::SendRecv)
      << communication.toString() << " goes through sendRecvOnDevice";
  Communicator& communicator = communicatorFor(communication, team);
  const auto n = static_cast<int64_t>(team.size());
  // The parts and the result lie in the step's memory order (layoutCommunicatedBuffers).
  const std::vector<int64_t>& order = communication.allocation_order;
  BRAZE_USER_CHECK(isDenseInOrder(input.sizes(), input.strides(), order))
      << communication.toString() << ": this device's part " << input.describe()
      << (order.empty() ? " is not dense row-major" : " is not dense in the step's memory order");
  const DataType dtype = input.dtype();
  const int device = communicator.device();
  const std::vector<int64_t>& sizes = input.sizes();
  const auto count = static_cast<size_t>(input.numel());
  // The step's result: in `into` where that fits, else new stream-ordered memory.
  auto resultOf = [&](std::vector<int64_t> result_sizes, int result_device, CUstream on) {
    if (into != nullptr && into->dtype() == dtype && into->sizes() == result_sizes &&
        isDenseInOrder(into->sizes(), into->strides(), order))
      return *into;
    return emptyOn(dtype, std::move(result_sizes), result_device, on, order);
  };
  using Kind = Communication::Kind;
  switch (communication.kind) {
    case Kind::Allreduce: {
      DeviceTensor output = resultOf(sizes, device, stream);
      communicator.allReduce(input.data(), output.data(), count, dtype, reduceOpOf(communication),
                             stream);
      return output;
    }
    case Kind::Allgather: {
      const int64_t axis = communication.input_axis;
      DeviceTensor output =
          resultOf(withAxis(sizes, axis, sizes[static_cast<size_t>(axis)] * n), device, stream);
      const PartLayout layout = layoutOf(output.sizes(), axis, n, dtype, order);
      if (layout.contiguousParts()) {
        communicator.allGather(input.data(), output.data(), count, dtype, stream, overlap);
        return output;
      }
      DeviceTensor blocks = emptyOn(dtype, output.sizes(), device, stream, order);
      communicator.allGather(input.data(), blocks.data(), count, dtype, stream, overlap);
      unpack(blocks.data(), layout, n, output.data(), stream);
      return output;
    }
    case Kind::ReduceScatter: {
      const int64_t axis = communication.output_axis;
      const int64_t part = partLength(communication, sizes, axis, n);
      DeviceTensor output = resultOf(withAxis(sizes, axis, part), device, stream);
      const PartLayout layout = layoutOf(sizes, axis, n, dtype, order);
      CUdeviceptr source = input.data();
      DeviceTensor blocks;
      if (!layout.contiguousParts()) {
        blocks = emptyOn(dtype, sizes, device, stream, order);
        pack(input.data(), layout, n, blocks.data(), stream);
        source = blocks.data();
      }
      communicator.reduceScatter(source, output.data(), count / static_cast<size_t>(n), dtype,
                                 reduceOpOf(communication), stream);
      return output;
    }
    case Kind::AllToAll: {
      BRAZE_INTERNAL_CHECK(order.empty()) << communication.toString() << ": parts not row-major";
      // Block j of what this device sends is its part along output_axis j; block i of what it
      // receives is device i's part along input_axis, of this device's part along output_axis.
      const int64_t from = communication.input_axis;
      const int64_t to = communication.output_axis;
      const int64_t part = partLength(communication, sizes, to, n);
      DeviceTensor sent = emptyOn(dtype, sizes, device, stream);
      pack(input.data(), layoutOf(sizes, to, n, dtype), n, sent.data(), stream);
      std::vector<int64_t> out_sizes = withAxis(sizes, to, part);
      out_sizes = withAxis(out_sizes, from, out_sizes[static_cast<size_t>(from)] * n);
      DeviceTensor received = emptyOn(dtype, out_sizes, device, stream);
      communicator.allToAll(sent.data(), received.data(), count / static_cast<size_t>(n), dtype,
                            stream);
      DeviceTensor output = resultOf(out_sizes, device, stream);
      unpack(received.data(), layoutOf(out_sizes, from, n, dtype), n, output.data(), stream);
      return output;
    }
    case Kind::SendRecv:
      break;
    case Kind::LocalSlice: {
      BRAZE_INTERNAL_CHECK(order.empty()) << communication.toString() << ": parts not row-major";
      const int64_t axis = communication.output_axis;
      const int64_t part = partLength(communication, sizes, axis, n);
      DeviceTensor output = resultOf(withAxis(sizes, axis, part), device, stream);
      const PartLayout layout = layoutOf(sizes, axis, n, dtype);
      copy2D(input.data() + static_cast<size_t>(communicator.rank()) * layout.run_bytes,
             layout.pitch_bytes, output.data(), layout.run_bytes, layout.run_bytes, layout.outer,
             stream);
      return output;
    }
  }
  return {};
}

}  // namespace braze::host
