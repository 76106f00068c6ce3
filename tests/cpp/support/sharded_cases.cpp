#include "support/sharded_cases.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <numeric>
#include <vector>

#include "braze/error.h"
#include "braze/host/collectives.h"
#include "braze/ir/sharding.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "support/random_tensor.h"

namespace braze::test {

namespace {

using Kind = Communication::Kind;

// Allgather + matmul: activations split by rows (sequence parallel), gathered for a matmul
// with a replicated weight.
ShardedCase allgatherMatmul(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* y = matmul(x, w);
  c.fusion->addOutput(y);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(x, mesh, 0);
  w->setDeviceMesh(mesh);
  y->setDeviceMesh(mesh);  // replicated: every device gets all of y
  c.inputs = {random.uniform(DataType::BFloat16, {64 * n, 64}),
              random.uniform(DataType::BFloat16, {64, 96})};
  c.steps = {Kind::Allgather};
  return c;
}

// Matmul + reduce-scatter: K split on both operands (row-parallel linear), the partial sums
// reduced and scattered by rows.
ShardedCase matmulReduceScatter(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* out = matmul(a, b);
  c.fusion->addOutput(out);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(a, mesh, 1);
  shardAxis(b, mesh, 0);
  shardAxis(out, mesh, 0);
  c.inputs = {random.uniform(DataType::BFloat16, {32 * n, 16 * n}, -1, 1),
              random.uniform(DataType::BFloat16, {16 * n, 64}, -1, 1)};
  c.steps = {Kind::ReduceScatter};
  c.tolerance = partialSumsInBFloat16(n);
  return c;
}

// Matmul + allreduce, then elementwise work on the replicated result.
ShardedCase matmulAllreduce(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* out = relu(matmul(a, b));
  c.fusion->addOutput(out);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(a, mesh, 1);
  shardAxis(b, mesh, 0);
  out->setDeviceMesh(mesh);
  c.inputs = {random.uniform(DataType::BFloat16, {48, 16 * n}, -1, 1),
              random.uniform(DataType::BFloat16, {16 * n, 80}, -1, 1)};
  c.steps = {Kind::Allreduce};
  c.tolerance = partialSumsInBFloat16(n);
  return c;
}

// A tensor-parallel MLP: column-parallel first matmul (the weight split by N), SiLU on the
// split hidden dim, row-parallel second matmul (K split), one allreduce.
ShardedCase tensorParallelMlp(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);   // [tokens, hidden]
  TensorView* w1 = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);  // [hidden, inter]
  TensorView* w2 = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);  // [inter, hidden]
  TensorView* h = matmul(x, w1);
  TensorView* g = mul(h, sigmoid(h));
  TensorView* y = matmul(g, w2);
  c.fusion->addOutput(y);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  x->setDeviceMesh(mesh);
  shardAxis(w1, mesh, 1);
  shardAxis(w2, mesh, 0);
  y->setDeviceMesh(mesh);
  // Values in [-1, 1]: the partial sums stay near 1, where a bfloat16 rounding is 1/256.
  c.inputs = {random.uniform(DataType::BFloat16, {64, 32}, -1, 1),
              random.uniform(DataType::BFloat16, {32, 16 * n}, -1, 1),
              random.uniform(DataType::BFloat16, {16 * n, 32}, -1, 1)};
  c.steps = {Kind::Allreduce};
  c.tolerance = partialSumsInBFloat16(n);
  return c;
}

// Data parallel rows: a softmax whose rows are split needs no communication; the column
// maxima and the mean of everything reduce over the split rows and are allreduced.
ShardedCase reductions(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 2);
  TensorView* e = exp(x);
  TensorView* rows = div(e, broadcast(sum(e, {1}), {false, true}));
  TensorView* columns = max(x, {0});
  TensorView* mean_all = mean(x, {0, 1});
  c.fusion->addOutput(rows);
  c.fusion->addOutput(columns);
  c.fusion->addOutput(mean_all);
  shardAxis(x, DeviceMesh::ofSize(n), 0);
  c.inputs = {random.uniform(DataType::Float32, {4 * n, 12})};
  c.steps = {Kind::Allreduce, Kind::Allreduce};
  return c;
}

// Rows split in, columns split out: an all-to-all; and a replicated input sliced locally.
ShardedCase allToAllAndLocalSlice(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 2);
  TensorView* r = makeSymbolicTensor(*c.fusion, 2);
  TensorView* y = set(x);
  TensorView* z = add(y, r);
  c.fusion->addOutput(z);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(x, mesh, 0);
  r->setDeviceMesh(mesh);
  shardAxis(y, mesh, 1);
  c.inputs = {random.uniform(DataType::Float32, {2 * n, 3 * n}),
              random.uniform(DataType::Float32, {2 * n, 3 * n})};
  c.steps = {Kind::AllToAll, Kind::LocalSlice};
  return c;
}

// The allgather + matmul of a sequence-parallel layer, pipelined: x is [chunks, rows, K] with
// each chunk's rows split over the devices; the output, streamed over the chunks, gathers a
// chunk in the iteration that multiplies it, so the gather of chunk i + 1 overlaps the matmul
// of chunk i.
ShardedCase pipelinedAllgatherMatmul(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 3, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* y = matmul(x, w);
  c.fusion->addOutput(y);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(x, mesh, 1);
  w->setDeviceMesh(mesh);
  y->setDeviceMesh(mesh);
  y->parallelize(0, ParallelType::Stream);
  c.inputs = {random.uniform(DataType::BFloat16, {3, 32 * n, 64}),
              random.uniform(DataType::BFloat16, {64, 96})};
  c.steps = {Kind::Allgather};
  return c;
}

// The matmul + reduce-scatter of a row-parallel linear, pipelined: each chunk's partial sums
// are reduce-scattered (by rows) in the iteration that computes them, while the next chunk's
// matmul runs.
ShardedCase pipelinedMatmulReduceScatter(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*c.fusion, 3, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* out = matmul(a, b);
  c.fusion->addOutput(out);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(a, mesh, 2);
  shardAxis(b, mesh, 0);
  shardAxis(out, mesh, 1);
  out->parallelize(0, ParallelType::Stream);
  c.inputs = {random.uniform(DataType::BFloat16, {3, 32 * n, 16 * n}, -1, 1),
              random.uniform(DataType::BFloat16, {16 * n, 64}, -1, 1)};
  c.steps = {Kind::ReduceScatter};
  c.tolerance = partialSumsInBFloat16(n);
  return c;
}

// Steps along a middle axis, between kernels (sequence parallelism on [batch, sequence,
// hidden]): tanh(x) gathered along the sequence before an add with a replicated r, and a matmul
// over a split K reduce-scattered along the sequence before a relu. layoutCommunicatedBuffers
// lays both steps' buffers out sequence-first, so each part is one block.
ShardedCase middleAxisSteps(int64_t n, RandomTensors& random) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 3);
  TensorView* r = makeSymbolicTensor(*c.fusion, 3);
  TensorView* a = makeSymbolicTensor(*c.fusion, 3, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* gathered = add(tanh(x), r);
  TensorView* scattered = relu(matmul(a, w));
  c.fusion->addOutput(gathered);
  c.fusion->addOutput(scattered);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  shardAxis(x, mesh, 1);
  r->setDeviceMesh(mesh);
  gathered->setDeviceMesh(mesh);
  shardAxis(a, mesh, 2);
  shardAxis(w, mesh, 0);
  shardAxis(scattered, mesh, 1);
  c.inputs = {random.uniform(DataType::Float32, {3, 4 * n, 16}),
              random.uniform(DataType::Float32, {3, 4 * n, 16}),
              random.uniform(DataType::BFloat16, {3, 4 * n, 8 * n}, -1, 1),
              random.uniform(DataType::BFloat16, {8 * n, 24}, -1, 1)};
  c.steps = {Kind::Allgather, Kind::ReduceScatter};
  c.tolerance = partialSumsInBFloat16(n);
  return c;
}

using Builder = std::function<ShardedCase(int64_t, RandomTensors&)>;

const std::vector<std::pair<std::string, Builder>>& builders() {
  static const std::vector<std::pair<std::string, Builder>> all = {
      {"allgather_matmul", allgatherMatmul},
      {"matmul_reduce_scatter", matmulReduceScatter},
      {"matmul_allreduce", matmulAllreduce},
      {"tensor_parallel_mlp", tensorParallelMlp},
      {"reductions", reductions},
      {"all_to_all_and_local_slice", allToAllAndLocalSlice},
      {"pipelined_allgather_matmul", pipelinedAllgatherMatmul},
      {"pipelined_matmul_reduce_scatter", pipelinedMatmulReduceScatter},
      {"middle_axis_steps", middleAxisSteps},
  };
  return all;
}

}  // namespace

std::vector<std::string> shardedCaseNames() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : builders()) names.push_back(name);
  return names;
}

ShardedCase makeShardedCase(const std::string& name, int64_t n) {
  for (size_t i = 0; i < builders().size(); ++i) {
    if (builders()[i].first != name) continue;
    RandomTensors random(1000 * (i + 1) + static_cast<uint64_t>(n));
    return builders()[i].second(n, random);
  }
  BRAZE_USER_CHECK(false) << "no sharded case named " << name;
  return {};
}

ShardedCase makeTwoByTwoCase() {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* y = matmul(x, w);
  TensorView* z = tanh(y);
  TensorView* columns = sum(cast(y, DataType::Float32), {0});
  c.fusion->addOutput(z);
  c.fusion->addOutput(columns);
  const DeviceMesh mesh({0, 1, 2, 3}, {2, 2});
  shardAxis(x, mesh, 0, ParallelType::DIDy);
  shardAxis(w, mesh, 1, ParallelType::DIDx);
  shardAxis(z, mesh, 0, ParallelType::DIDy);
  RandomTensors random(4242);
  c.inputs = {random.uniform(DataType::BFloat16, {8, 6}, -1, 1),
              random.uniform(DataType::BFloat16, {6, 10}, -1, 1)};
  // z gathers N along DIDx (teams {0, 1} and {2, 3}); the column sums add the rows' partial
  // sums along DIDy (teams {0, 2} and {1, 3}).
  c.steps = {Kind::Allgather, Kind::Allreduce};
  c.tolerance = partialSumsInBFloat16(2);
  return c;
}

ShardedCase makeTwoStageCase(int64_t stage_size) {
  std::vector<int64_t> first_devices(static_cast<size_t>(stage_size));
  std::vector<int64_t> second_devices(static_cast<size_t>(stage_size));
  std::iota(first_devices.begin(), first_devices.end(), 0);
  std::iota(second_devices.begin(), second_devices.end(), stage_size);
  return makeTwoStageCase(DeviceMesh(first_devices), DeviceMesh(second_devices));
}

ShardedCase makeTwoStageCase(const DeviceMesh& first, const DeviceMesh& second) {
  ShardedCase c;
  c.fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* w1 = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* w2 = makeSymbolicTensor(*c.fusion, 2, DataType::BFloat16);
  TensorView* h = relu(matmul(x, w1));
  TensorView* y = matmul(h, w2);
  c.fusion->addOutput(h);
  c.fusion->addOutput(y);
  x->setDeviceMesh(first);
  shardAxis(w1, first, 1);
  shardAxis(w2, second, 0);
  y->setDeviceMesh(second);
  RandomTensors random(811);
  c.inputs = {random.uniform(DataType::BFloat16, {8, 6}, -1, 1),
              random.uniform(DataType::BFloat16, {6, 24}, -1, 1),
              random.uniform(DataType::BFloat16, {24, 4}, -1, 1)};
  // A stage of one device holds its whole weights: nothing to add up across it.
  c.steps = second.size() > 1 ? std::vector<Kind>{Kind::SendRecv, Kind::Allreduce}
                              : std::vector<Kind>{Kind::SendRecv};
  c.tolerance = partialSumsInBFloat16(second.size());
  return c;
}

void shardAxis(TensorView* tv, const DeviceMesh& mesh, int64_t axis, ParallelType type) {
  tv->setDeviceMesh(mesh);
  const int64_t dim = type == ParallelType::DIDx ? mesh.numDims() - 1 : 0;
  tv->split(axis, mesh.size(dim), /*inner_split=*/false);
  tv->parallelize(axis, type);
}

Tolerance partialSumsInBFloat16(int64_t n) {
  Tolerance tolerance = toleranceFor(DataType::BFloat16);
  tolerance.atol *= static_cast<double>(2 * n);
  return tolerance;
}

std::unique_ptr<Fusion> unshardedCopy(const Fusion& definition) {
  std::unique_ptr<Fusion> copy = definition.clone();
  takeShardings(*copy);
  for (TensorView* tv : copy->allTensors()) tv->setSharding(std::nullopt);
  return copy;
}

std::vector<std::vector<HostTensor>> runOnSimulatedMesh(MultiDeviceExecutor& executor,
                                                        const std::vector<HostTensor>& whole,
                                                        const std::vector<int64_t>& devices,
                                                        bool on_gpu) {
  host::SimulatedMesh mesh(std::chrono::seconds(120));
  std::vector<std::vector<HostTensor>> outputs(devices.size());
  host::SimulatedMesh::rethrowCause(mesh.runEach(devices, [&](int64_t device,
                                                              host::Collectives& collectives) {
    std::vector<FusionArgument> parts;
    for (size_t i = 0; i < whole.size(); ++i) {
      // A device outside an input's mesh passes a stand-in of a part's sizes.
      const auto* tv = executor.fusion().inputs()[i]->as<TensorView>();
      const bool held = !tv->sharding() || tv->sharding()->mesh.has(device);
      parts.emplace_back(
          shardOf(whole[i], *tv, held ? device : tv->sharding()->mesh.devices().front()));
    }
    RunOptions options;
    options.reference_evaluator = !on_gpu;
    const auto k =
        static_cast<size_t>(std::find(devices.begin(), devices.end(), device) - devices.begin());
    for (FusionArgument& output : executor.run(parts, collectives, options))
      outputs[k].push_back(std::get<HostTensor>(output));
  }));
  return outputs;
}

}  // namespace braze::test
