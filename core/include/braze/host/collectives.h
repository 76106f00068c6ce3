#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "braze/eval/host_tensor.h"
#include "braze/host/communicator.h"
#include "braze/host/resharding.h"
#include "braze/runtime/device_tensor.h"

namespace braze::host {

/// The devices that run one resharding step together: those of `communication`'s mesh whose
/// coordinates on every other mesh dim equal `device`'s, in order along the communicated dim.
/// Refused for a device outside the mesh, and for a SendRecv (sendRecvRoles).
std::vector<int64_t> teamOf(const Communication& communication, int64_t device);

/// How a device takes part in a SendRecv step. The device at each position of the source mesh
/// sends its part to the destination's device at that position, so a device on both meshes (at
/// different positions) sends one part and receives another; one at the same position of both
/// keeps its part (it is its own peer: no transfer). Empty where the device is off that mesh.
struct SendRecvRoles {
  std::optional<int64_t> send_to;
  std::optional<int64_t> receive_from;
  /// The positions of the device in the source and in the destination mesh (-1 off it).
  int64_t send_position = -1;
  int64_t receive_position = -1;
};
SendRecvRoles sendRecvRoles(const Communication& communication, int64_t device);

/// How one device takes part in the resharding steps of a sharded fusion's host program: the
/// collectives among the devices of a mesh (a team, teamOf), on this device's parts.
class Collectives {
 public:
  virtual ~Collectives() = default;
  /// This process's device: its id in every mesh.
  virtual int64_t device() const = 0;
  /// Runs `communication` among `team` (which holds device()) on this device's part `input` of
  /// a tensor (dense, its dims with reductions dropped) and returns this device's part of the
  /// result. Every device of the team calls it for the same step in the same order.
  virtual HostTensor run(const Communication& communication, const std::vector<int64_t>& team,
                         const HostTensor& input) = 0;
  /// As run, on this device's part in GPU memory (dense, row-major), enqueued on `stream`: the
  /// result is ready in that stream's order. By default refused: these collectives run on host
  /// tensors.
  /// With `into` (a dense tensor of the result's dtype and sizes), the result is written there
  /// and returned as that memory; otherwise it is allocated in `stream`'s order. `overlap`
  /// says whether other streams compute meanwhile (a step of a stream loop).
  virtual DeviceTensor runOnDevice(const Communication& communication,
                                   const std::vector<int64_t>& team, const DeviceTensor& input,
                                   CUstream stream, const DeviceTensor* into = nullptr,
                                   Overlap overlap = Overlap::Alone);
  /// Runs SendRecv step `communication` (sendRecvRoles): sends `part` (this device's part on the
  /// source mesh; null off it) and returns what this device receives on the destination mesh
  /// (nullopt off it). By default a pair of run() calls, a team of sender and receiver each, in
  /// the order of their mesh positions: every device takes the pairs in one global order, so a
  /// device that both sends and receives never waits on a cycle.
  virtual std::optional<HostTensor> sendRecv(const Communication& communication,
                                             const HostTensor* part);
  /// As sendRecv, on GPU memory enqueued on `stream`; the received part goes into `into` where
  /// given (dense, the part's dtype and sizes). By default refused, as runOnDevice.
  virtual std::optional<DeviceTensor> sendRecvOnDevice(const Communication& communication,
                                                       const DeviceTensor* part,
                                                       const DeviceTensor* into, CUstream stream);
  /// Called instead of run / runOnDevice on a device that takes no part in `communication`
  /// (a step of another pipeline stage's mesh), where the others run it: collectives that set
  /// up teams together (NCCL's communicator splits) take part there. Nothing by default.
  virtual void skip(const Communication& /*communication*/) {}
};

/// The collectives of one rank of an NCCL communicator, on device tensors: a mesh's device ids
/// are the communicator's ranks. Each step is one NCCL collective on `stream` (an all-to-all is
/// one group of sends and receives), with the parts laid out as NCCL wants them by strided
/// device copies when the split axis is not the outermost. A team of every rank in rank order
/// uses the communicator itself; any other team (a mesh dim of a 2-D mesh, a pipeline stage's
/// mesh) its own communicator, split off once (Communicator::split) when every rank first
/// reaches a step over that mesh dim (ranks off the mesh through skip()). A SendRecv between
/// meshes is one group of this rank's send and receive on the communicator of every rank.
class NcclCollectives : public Collectives {
 public:
  explicit NcclCollectives(Communicator& communicator);
  int64_t device() const override;
  /// Refused: NCCL moves GPU memory; pass device tensors.
  HostTensor run(const Communication& communication, const std::vector<int64_t>& team,
                 const HostTensor& input) override;
  DeviceTensor runOnDevice(const Communication& communication, const std::vector<int64_t>& team,
                           const DeviceTensor& input, CUstream stream,
                           const DeviceTensor* into = nullptr,
                           Overlap overlap = Overlap::Alone) override;
  /// One NCCL group: the send and the receive of this rank start together.
  std::optional<DeviceTensor> sendRecvOnDevice(const Communication& communication,
                                               const DeviceTensor* part, const DeviceTensor* into,
                                               CUstream stream) override;
  void skip(const Communication& communication) override;

 private:
  /// A mesh (devices, shape) and one of its dims: the teams of one split.
  using TeamKey = std::tuple<std::vector<int64_t>, std::vector<int64_t>, int64_t>;
  static TeamKey keyOf(const Communication& communication);
  /// The communicator of `team`: the whole one, or the team's, split off on first use.
  Communicator& communicatorFor(const Communication& communication,
                                const std::vector<int64_t>& team);

  Communicator& communicator_;
  /// Per mesh dim split so far: this rank's team's communicator, or none when it is in no team.
  std::map<TeamKey, std::optional<Communicator>> teams_;
};

/// This device's part of the result of `communication` when the parts of `team` are `parts`
/// (in team order): the definition of each step (resharding.h's table) on host tensors, which
/// the simulated mesh runs and the tests of real collectives compare with.
HostTensor combineParts(const Communication& communication, const std::vector<HostTensor>& parts,
                        int64_t position);

/// N devices in one process, each a thread running its host program on the reference
/// evaluator (braze::MultiDeviceExecutor with reference_evaluator): the CPU check of sharded
/// fusions. A step completes once every device of its team has called it; a device whose run
/// failed calls abort() so that the others raise instead of waiting forever, and a step that
/// waits longer than the timeout raises, naming the step and the devices that did not come.
class SimulatedMesh {
 public:
  explicit SimulatedMesh(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~SimulatedMesh();
  SimulatedMesh(const SimulatedMesh&) = delete;
  SimulatedMesh& operator=(const SimulatedMesh&) = delete;

  /// The collectives of device `device` (made on first use; valid while the mesh lives).
  Collectives& device(int64_t device);
  /// Wakes every device waiting in a step, which then raises; later steps raise at once.
  void abort();
  /// Runs `body(device, its collectives)` for every device of `devices` at once, each on a
  /// thread of its own; a device whose body throws aborts the mesh, so the others stop instead
  /// of waiting for it. Returns each device's failure (null where its body returned).
  std::vector<std::exception_ptr> runEach(
      const std::vector<int64_t>& devices,
      const std::function<void(int64_t device, Collectives& collectives)>& body);
  /// Steps run so far, counting each team's step once.
  int64_t steps() const;
  /// Rethrows the failure that stopped a runEach: the first that is not another device
  /// stopping because the mesh was aborted. Returns when there is none.
  static void rethrowCause(const std::vector<std::exception_ptr>& failures);

 private:
  struct State;
  class Device;
  std::unique_ptr<State> state_;
};

}  // namespace braze::host
