// Sharded definitions on a one-rank NCCL communicator (skipped without a GPU and NCCL): each
// resharding step on device tensors against its definition on host tensors (combineParts),
// parts split along the outermost axis and along an inner one (the strided packing), and whole
// definitions through MultiDeviceExecutor on device tensors against the unsharded reference.
// On a mesh of one device every axis is whole (takeShardings), so those definitions plan no
// steps and run as plain fusions; asked to (MultiDeviceOptions::steps_on_single_device_dims),
// they plan their steps on teams of one, and every step path runs through the executor here.
// tools/multigpu-test.sh runs them on several ranks.

#include <gtest/gtest.h>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/nccl_library.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/eval/strided_layout.h"
#include "braze/host/collectives.h"
#include "braze/host/communicator.h"
#include "braze/host/store.h"
#include "braze/ir/sharding.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/multidevice_executor.h"
#include "support/random_tensor.h"
#include "support/sharded_cases.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using namespace std::chrono_literals;
using Kind = Communication::Kind;

class MultiDeviceGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver::isDriverAvailable(&why)) GTEST_SKIP() << "no CUDA driver or device: " << why;
    if (!driver::ncclAvailable(&why)) GTEST_SKIP() << "NCCL is not installed here: " << why;
    store_ = std::make_unique<host::TcpStore>("127.0.0.1", 0, true);
    host::LaunchEnvironment launch;
    launch.launcher = "test";
    communicator_ = std::make_unique<host::Communicator>(
        host::Communicator::create(launch, *store_, 0, {.timeout = 60s}));
    collectives_ = std::make_unique<host::NcclCollectives>(*communicator_);
  }

  std::unique_ptr<host::TcpStore> store_;
  std::unique_ptr<host::Communicator> communicator_;
  std::unique_ptr<host::NcclCollectives> collectives_;
};

TEST_F(MultiDeviceGpuTest, EveryStepMatchesItsDefinitionOnHostTensors) {
  test::RandomTensors random(3);
  const DeviceMesh mesh = DeviceMesh::ofSize(1);
  for (int64_t axis : {0, 1}) {
    for (Kind kind : {Kind::Allgather, Kind::LocalSlice, Kind::Allreduce, Kind::ReduceScatter,
                      Kind::AllToAll}) {
      Communication step;
      step.kind = kind;
      step.mesh = mesh;
      step.input_axis = kind == Kind::Allgather || kind == Kind::AllToAll ? axis : -1;
      step.output_axis = kind == Kind::Allgather || kind == Kind::Allreduce ? -1 : 1 - axis;
      if (kind == Kind::LocalSlice || kind == Kind::ReduceScatter) step.output_axis = axis;
      SCOPED_TRACE(step.toString());
      const HostTensor part = random.uniform(DataType::Float32, {6, 10, 3});
      const DeviceTensor result =
          collectives_->runOnDevice(step, {0}, DeviceTensor::fromHost(part), nullptr);
      test::expectClose(result.toHost(), host::combineParts(step, {part}, 0));
    }
  }
}

// Steps whose parts lie with the split axis outermost (layoutCommunicatedBuffers): the parts go
// to NCCL as blocks and the result comes back in that order, with the values of the step's
// definition.
TEST_F(MultiDeviceGpuTest, StepsOnPartsLaidOutAxisFirstKeepThatLayout) {
  test::RandomTensors random(11);
  const std::vector<int64_t> order = {1, 0, 2};
  for (Kind kind : {Kind::Allgather, Kind::ReduceScatter}) {
    Communication step;
    step.kind = kind;
    step.mesh = DeviceMesh::ofSize(1);
    (kind == Kind::Allgather ? step.input_axis : step.output_axis) = 1;
    step.allocation_order = order;
    SCOPED_TRACE(step.toString());
    const HostTensor part = random.uniform(DataType::Float32, {6, 10, 3});
    HostTensor laid = HostTensor::empty(DataType::Float32, part.sizes(), order);
    for (int64_t i = 0; i < part.numel(); ++i) laid.setFlat(i, part.atFlat(i));
    const DeviceTensor result =
        collectives_->runOnDevice(step, {0}, DeviceTensor::fromHost(laid), nullptr);
    EXPECT_TRUE(isDenseInOrder(result.sizes(), result.strides(), order)) << result.describe();
    test::expectClose(result.toHost(), host::combineParts(step, {part}, 0));
  }
}

// The regions around steps laid out as blocks, as kernels: every device of a simulated mesh
// runs its regions on this GPU (the producers write their parts sequence-first, the readers
// read the gathered and scattered buffers so), and the steps on host tensors.
TEST(MultiDeviceKernelsTest, MiddleAxisStepsRunTheirRegionsAsKernels) {
  std::string why;
  if (!driver::isDriverAvailable(&why)) GTEST_SKIP() << "no CUDA driver or device: " << why;
  for (int64_t n : {2, 4}) {
    SCOPED_TRACE("mesh of " + std::to_string(n));
    test::ShardedCase c = test::makeShardedCase("middle_axis_steps", n);
    ExecutorCacheOptions options;
    options.registry = &test::shippedSchedulers();
    MultiDeviceExecutor executor(*c.fusion, options);
    const DeviceMesh mesh = DeviceMesh::ofSize(n);
    const std::vector<HostTensor> expected =
        evaluateFusionTensors(*test::unshardedCopy(*c.fusion), std::vector<HostTensor>(c.inputs));
    const std::vector<std::vector<HostTensor>> outputs =
        test::runOnSimulatedMesh(executor, c.inputs, mesh.devices(), /*on_gpu=*/true);
    for (int64_t device = 0; device < n; ++device) {
      for (size_t o = 0; o < expected.size(); ++o) {
        SCOPED_TRACE("device " + std::to_string(device) + ", output " + std::to_string(o));
        const auto* tv = executor.fusion().outputs()[o]->as<TensorView>();
        test::expectClose(outputs[static_cast<size_t>(device)][o],
                          shardOf(expected[o], *tv, device), c.tolerance);
      }
    }
  }
}

// A SendRecv step on one rank: the device holds the same position of both meshes and keeps its
// part (into the given buffer and into new memory), and the grouped send and receive of
// Communicator::sendRecv, here to itself, moves a part whole.
TEST_F(MultiDeviceGpuTest, SendRecvKeepsThePartOfADeviceOnBothMeshesAndGroupsItsTransfers) {
  test::RandomTensors random(7);
  const HostTensor part = random.uniform(DataType::BFloat16, {6, 10});
  const DeviceTensor on_device = DeviceTensor::fromHost(part);
  Communication step;
  step.kind = Kind::SendRecv;
  step.mesh = DeviceMesh({0});
  step.destination = DeviceMesh({0});
  DeviceTensor into = DeviceTensor::fromHost(random.uniform(DataType::BFloat16, {6, 10}));
  const std::optional<DeviceTensor> kept =
      collectives_->sendRecvOnDevice(step, &on_device, &into, nullptr);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->data(), into.data());
  test::expectClose(kept->toHost(), part);
  const std::optional<DeviceTensor> fresh =
      collectives_->sendRecvOnDevice(step, &on_device, nullptr, nullptr);
  ASSERT_TRUE(fresh.has_value());
  test::expectClose(fresh->toHost(), part);

  DeviceTensor received = DeviceTensor::fromHost(random.uniform(DataType::BFloat16, {6, 10}));
  communicator_->sendRecv(on_device.data(), 0, received.data(), 0,
                          static_cast<size_t>(part.numel()), DataType::BFloat16, nullptr);
  communicator_->waitFor(nullptr);
  test::expectClose(received.toHost(), part);
}

// Runs `definition` on this one rank with device parts and checks them against the unsharded
// reference (with one device, a part is the whole tensor), and that it plans the steps `steps`
// (none on a mesh of one device, unless `multidevice` asks for them).
void expectMatchesReference(const Fusion& definition, const std::vector<HostTensor>& whole,
                            host::Collectives& collectives,
                            std::optional<test::Tolerance> tolerance = std::nullopt,
                            const std::vector<Kind>& steps = {},
                            MultiDeviceOptions multidevice = {}) {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  MultiDeviceExecutor executor(definition, options, multidevice);
  std::vector<Kind> kinds;
  for (size_t s = 0; s < executor.segments().segments.size(); ++s) {
    if (auto step = executor.stepOf(static_cast<int32_t>(s))) kinds.push_back(step->kind);
  }
  EXPECT_EQ(kinds, steps);
  const std::vector<HostTensor> expected =
      evaluateFusionTensors(*test::unshardedCopy(definition), std::vector<HostTensor>(whole));
  std::vector<FusionArgument> parts;
  for (const HostTensor& tensor : whole) parts.emplace_back(DeviceTensor::fromHost(tensor));
  const std::vector<FusionArgument> outputs = executor.run(parts, collectives);
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t o = 0; o < expected.size(); ++o)
    test::expectClose(std::get<DeviceTensor>(outputs[o]).toHost(), expected[o], tolerance);
}

// Every shared case on this one rank with its steps planned anyway, on teams of one: each step
// goes through NCCL inside the executor's device program (the stream-pipelined ones in their
// loops on the pool streams, the middle-axis ones on their regions' layouts).
TEST_F(MultiDeviceGpuTest, EverySharedCaseRunsItsStepsOnOneRankWhenAsked) {
  MultiDeviceOptions multidevice;
  multidevice.steps_on_single_device_dims = true;
  for (const std::string& name : test::shardedCaseNames()) {
    SCOPED_TRACE(name);
    test::ShardedCase c = test::makeShardedCase(name, 1);
    expectMatchesReference(*c.fusion, c.inputs, *collectives_, c.tolerance, c.steps, multidevice);
  }
}

TEST_F(MultiDeviceGpuTest, EverySharedCaseOnOneRank) {
  for (const std::string& name : test::shardedCaseNames()) {
    SCOPED_TRACE(name);
    test::ShardedCase c = test::makeShardedCase(name, 1);
    expectMatchesReference(*c.fusion, c.inputs, *collectives_, c.tolerance);
  }
}

TEST_F(MultiDeviceGpuTest, AllgatherAndReduceScatterDefinitionsRunWholeOnOneDevice) {
  const DeviceMesh mesh = DeviceMesh::ofSize(1);
  test::RandomTensors random(5);
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* y = matmul(x, w);
    fusion->addOutput(y);
    test::shardAxis(x, mesh, 0);
    w->setDeviceMesh(mesh);
    y->setDeviceMesh(mesh);
    expectMatchesReference(*fusion,
                           {random.uniform(DataType::BFloat16, {256, 128}),
                            random.uniform(DataType::BFloat16, {128, 192})},
                           *collectives_);
  }
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* c = relu(matmul(a, b));
    fusion->addOutput(c);
    test::shardAxis(a, mesh, 1);
    test::shardAxis(b, mesh, 0);
    test::shardAxis(c, mesh, 1);  // columns: the reduce-scatter packs an inner axis
    expectMatchesReference(*fusion,
                           {random.uniform(DataType::BFloat16, {128, 256}),
                            random.uniform(DataType::BFloat16, {256, 64})},
                           *collectives_);
  }
}

TEST_F(MultiDeviceGpuTest, ReductionAllToAllAndSliceDefinitionsRunWholeOnOneDevice) {
  const DeviceMesh mesh = DeviceMesh::ofSize(1);
  test::RandomTensors random(7);
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* r = makeSymbolicTensor(*fusion, 2);
  TensorView* columns = sum(x, {0});
  TensorView* y = set(x);
  TensorView* z = add(y, r);
  fusion->addOutput(columns);
  fusion->addOutput(z);
  test::shardAxis(x, mesh, 0);
  r->setDeviceMesh(mesh);
  test::shardAxis(y, mesh, 1);
  expectMatchesReference(
      *fusion,
      {random.uniform(DataType::Float32, {64, 96}), random.uniform(DataType::Float32, {64, 96})},
      *collectives_);
}

}  // namespace
}  // namespace braze
