#pragma once

#include <memory>
#include <string>
#include <vector>

#include "braze/host/collectives.h"
#include "braze/host/host_program.h"
#include "braze/host/stream_stages.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/segment/segmented_fusion.h"

namespace braze {

struct MultiDeviceOptions {
  /// Streams each stream loop's iterations run on (iteration i on stream i % stream_pool).
  int32_t stream_pool = 4;
  /// Plans the steps of axes over mesh dims of one device, which hold them whole and need none
  /// (takeShardings): the one-GPU test tier runs every step path this way, on teams of one.
  bool steps_on_single_device_dims = false;
};

/// Runs a sharded definition (device meshes and DIDx / DIDy axes on its tensors, global shapes)
/// on one device of its meshes: the same object on every device, each passing its parts of the
/// inputs and getting its parts of the outputs.
///
/// Made once per definition: the shardings are taken and propagated (takeShardings,
/// propagateShardings), every Expr made local by resharding steps (insertResharding), and the
/// fusion cut at those steps into compute regions and communications: a SegmentedFusion whose
/// host program runs each region (through a FusionExecutorCache of its own: segmentation,
/// schedulers, kernels, as for any fusion) and each step as a Communicate, waited for before its
/// result is first read. A stream axis (ParallelType::Stream) on the tensors a step feeds puts
/// the step in their stream loop, a slice per iteration, so the transfer of one slice overlaps
/// the compute of another. `program().toString()` prints it (BRAZE_DUMP=host_ir style), with each
/// buffer's sharding.
class MultiDeviceExecutor {
 public:
  explicit MultiDeviceExecutor(const Fusion& definition, ExecutorCacheOptions options = {},
                               MultiDeviceOptions multidevice = {});
  ~MultiDeviceExecutor();
  MultiDeviceExecutor(const MultiDeviceExecutor&) = delete;
  MultiDeviceExecutor& operator=(const MultiDeviceExecutor&) = delete;

  /// `collectives.device()`'s parts of the outputs, from its parts of the inputs (a replicated
  /// input whole, a split one its part along each split axis; for an input on a mesh without
  /// this device, a stand-in of a part's sizes, which is not read). On several meshes (stages
  /// that send tensors to each other), each device runs the regions of its meshes, and an
  /// output on a mesh without it comes back empty (undefined). Host tensors on the reference
  /// evaluator (SimulatedMesh), or device tensors on the GPU with NcclCollectives, every region
  /// and step enqueued on options.stream. Errors name the input and axis: a device outside an
  /// input's mesh, a part whose size does not match the others'.
  std::vector<FusionArgument> run(const std::vector<FusionArgument>& inputs,
                                  host::Collectives& collectives, const RunOptions& options = {});

  /// The definition as it runs: every tensor placed, resharding steps inserted.
  const Fusion& fusion() const { return *fusion_; }
  const SegmentedFusion& segments() const { return segmented_; }
  const host::HostProgram& program() const { return program_; }
  /// The step segment `segment` communicates, or nullopt for a compute region.
  std::optional<Communication> stepOf(int32_t segment) const;
  /// One line per step (what it communicates) and, per compute region, the kernels of its last
  /// run (segments, their schedulers and what each chose), as FusionKernelRuntime::describe
  /// prints them: where a traced region's time goes.
  std::string describe() const;

 private:
  std::unique_ptr<Fusion> fusion_;
  std::unique_ptr<host::StreamStages> stages_;
  SegmentedFusion segmented_;
  host::HostProgram program_;
  std::vector<std::optional<Communication>> communications_;  // by segment
  std::vector<std::optional<DeviceMesh>> region_meshes_;      // by segment; none for steps
  std::vector<int64_t> devices_;  ///< every device of the definition's meshes, sorted
  ExecutorCacheOptions options_;
  std::vector<std::unique_ptr<FusionExecutorCache>> regions_;  // by segment; null for steps
};

/// The part of `whole` (a tensor of a sharded definition, as its global shape) that `device`
/// holds under `sharding`: each split axis narrowed to the device's position along its mesh dim
/// (reductions dropped from the positions). Refused, naming `tensor`, for a device outside the
/// mesh or an axis that does not split evenly.
HostTensor shardOf(const HostTensor& whole, const TensorView& tensor, int64_t device);

}  // namespace braze
