#pragma once

// Sharded definitions on a 1-D mesh of n devices, shared by the simulated-mesh tests (every
// device a thread on the CPU) and the multi-GPU tests (one process per GPU over NCCL), each
// with its whole inputs, the resharding steps it must get, and its tolerance.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braze/host/resharding.h"
#include "braze/ir/fusion.h"
#include "braze/runtime/multidevice_executor.h"
#include "support/tensor_compare.h"

namespace braze::test {

struct ShardedCase {
  std::unique_ptr<Fusion> fusion;
  std::vector<HostTensor> inputs;  ///< whole tensors; each device gets its parts (shardOf)
  std::vector<Communication::Kind> steps;
  std::optional<Tolerance> tolerance;
};

/// The names of the cases: allgather_matmul, matmul_reduce_scatter, matmul_allreduce,
/// tensor_parallel_mlp, reductions, all_to_all_and_local_slice, the stream-pipelined
/// pipelined_allgather_matmul and pipelined_matmul_reduce_scatter, and middle_axis_steps (an
/// allgather and a reduce-scatter along the middle axis of 3-D tensors, laid out as blocks).
std::vector<std::string> shardedCaseNames();
/// Case `name` on a mesh of devices 0 .. n - 1, with inputs drawn from a seed of the name and n.
ShardedCase makeShardedCase(const std::string& name, int64_t n);

/// A 2x2 mesh (devices 0 .. 3): rows over DIDy, columns over DIDx, a step along each mesh dim
/// (an allgather among {0, 1} and {2, 3}, an allreduce among {0, 2} and {1, 3}).
ShardedCase makeTwoByTwoCase();

/// Two pipeline stages of `stage_size` devices each (0 .. 3 by default; a divisor of 24):
/// relu(x w1) with w1's columns split over the first stage {0, 1}, sent part for part to the
/// second {2, 3} (SendRecv), times w2 with its rows split there, allreduced (no allreduce for
/// stages of one device). Output h lives on the first stage, y on the second.
ShardedCase makeTwoStageCase(int64_t stage_size = 2);
/// The same two stages on meshes `first` and `second` of one shape, which may share devices.
ShardedCase makeTwoStageCase(const DeviceMesh& first, const DeviceMesh& second);

/// Shards `tv`'s logical axis `axis` over the mesh dim `type` names, as a user writes it.
void shardAxis(TensorView* tv, const DeviceMesh& mesh, int64_t axis,
               ParallelType type = ParallelType::DIDx);

/// A tolerance for bfloat16 results of a reduction split over `n` devices: each device's
/// partial result is rounded to bfloat16, and so is each step of the reduction across devices
/// (as NCCL's ring does), where the unsharded reference rounds once.
Tolerance partialSumsInBFloat16(int64_t n);

/// The definition without meshes or DID axes: what every device's parts are checked against.
std::unique_ptr<Fusion> unshardedCopy(const Fusion& definition);

/// Runs `executor` on every device of `devices` at once on a simulated mesh (a thread each),
/// each with its parts of `whole`, and returns each device's outputs (host tensors). The regions
/// run on the reference evaluator, or with `on_gpu` as kernels on the GPU (every device on the
/// same one), the steps on host tensors either way.
std::vector<std::vector<HostTensor>> runOnSimulatedMesh(MultiDeviceExecutor& executor,
                                                        const std::vector<HostTensor>& whole,
                                                        const std::vector<int64_t>& devices,
                                                        bool on_gpu = false);

}  // namespace braze::test
