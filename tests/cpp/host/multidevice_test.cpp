// Sharded definitions on a simulated mesh: every device a thread running its host program on
// the reference evaluator (regions through their own executor caches, the shipped schedulers
// asked as on a GPU), resharding steps on host tensors. Each device's outputs are compared with
// its parts of the unsharded definition's reference result, on 1-D meshes of 2, 4 and 8 and a
// 2x2 mesh.

#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <set>

#include "braze/eval/reference_evaluator.h"
#include "braze/host/resharding.h"
#include "braze/ir/sharding.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/runtime/multidevice_executor.h"
#include "support/error_matchers.h"
#include "support/random_tensor.h"
#include "support/sharded_cases.h"
#include "support/shipped_registry.h"
#include "support/tensor_compare.h"

namespace braze {
namespace {

using Kind = Communication::Kind;

ExecutorCacheOptions shippedOptions() {
  ExecutorCacheOptions options;
  options.registry = &test::shippedSchedulers();
  return options;
}

// Runs `definition` sharded on `devices` and checks every device's outputs against its parts
// of the unsharded reference result.

void expectMatchesUnsharded(const Fusion& definition, const std::vector<HostTensor>& whole,
                            const std::vector<int64_t>& devices,
                            std::optional<test::Tolerance> tolerance = std::nullopt) {
  MultiDeviceExecutor executor(definition, shippedOptions());
  const std::vector<HostTensor> expected =
      evaluateFusionTensors(*test::unshardedCopy(definition), std::vector<HostTensor>(whole));
  const std::vector<std::vector<HostTensor>> outputs =
      test::runOnSimulatedMesh(executor, whole, devices);
  for (size_t k = 0; k < devices.size(); ++k) {
    ASSERT_EQ(outputs[k].size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o) {
      SCOPED_TRACE("device " + std::to_string(devices[k]) + ", output " + std::to_string(o));
      const auto* tv = executor.fusion().outputs()[o]->as<TensorView>();
      if (tv->sharding() && !tv->sharding()->mesh.has(devices[k])) continue;  // another stage's
      test::expectClose(outputs[k][o], shardOf(expected[o], *tv, devices[k]), tolerance);
    }
  }
}

std::vector<Kind> stepsOf(const MultiDeviceExecutor& executor) {
  std::vector<Kind> kinds;
  for (size_t s = 0; s < executor.segments().segments.size(); ++s) {
    if (auto step = executor.stepOf(static_cast<int32_t>(s))) kinds.push_back(step->kind);
  }
  return kinds;
}

// Every shared case on 1-D meshes of 2, 4 and 8 devices: the steps it gets, and each device's
// outputs against its parts of the unsharded result.
class MeshSizeTest : public ::testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(MeshSizeTest, MatchesTheUnshardedResult) {
  const auto& [name, n] = GetParam();
  test::ShardedCase c = test::makeShardedCase(name, n);
  MultiDeviceExecutor executor(*c.fusion, shippedOptions());
  EXPECT_EQ(stepsOf(executor), c.steps);
  // A pipelined case communicates inside its stream loop (one indent deep), not before it.
  const std::string program = executor.program().toString();
  EXPECT_EQ(name.starts_with("pipelined") ? 1 : 0,
            program.find("\n  communicate segment") != std::string::npos ? 1 : 0)
      << program;
  expectMatchesUnsharded(*c.fusion, c.inputs, DeviceMesh::ofSize(n).devices(), c.tolerance);
}

INSTANTIATE_TEST_SUITE_P(Meshes, MeshSizeTest,
                         ::testing::Combine(::testing::ValuesIn(test::shardedCaseNames()),
                                            ::testing::Values(2, 4, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_of" +
                                  std::to_string(std::get<1>(info.param));
                         });

// A 2x2 mesh: x's rows over DIDy, the weight's N over DIDx; the matmul's output is split both
// ways, then gathered along DIDx (a team of the two devices of each row of the mesh).
TEST(MultiDeviceTest, TwoByTwoMeshSplitsRowsAndColumns) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* y = matmul(x, w);
  TensorView* z = tanh(y);
  fusion->addOutput(y);
  fusion->addOutput(z);
  const DeviceMesh mesh({0, 1, 2, 3}, {2, 2});
  test::shardAxis(x, mesh, 0, ParallelType::DIDy);
  test::shardAxis(w, mesh, 1, ParallelType::DIDx);
  test::shardAxis(z, mesh, 0, ParallelType::DIDy);
  test::RandomTensors random(79);
  MultiDeviceExecutor executor(*fusion, shippedOptions());
  // y: rows over DIDy (from x), N over DIDx (from w); z keeps its rows split and gathers N.
  EXPECT_EQ(executor.fusion().outputs()[0]->as<TensorView>()->sharding()->toString(),
            "mesh[2, 2]{0, 1, 2, 3} axis 0 over DIDy, axis 1 over DIDx");
  EXPECT_EQ(stepsOf(executor), std::vector<Kind>{Kind::Allgather});
  expectMatchesUnsharded(
      *fusion,
      {random.uniform(DataType::BFloat16, {8, 6}), random.uniform(DataType::BFloat16, {6, 10})},
      mesh.devices());
}

TEST(MultiDeviceTest, TwoByTwoMeshStepsAlongEachMeshDim) {
  test::ShardedCase c = test::makeTwoByTwoCase();
  MultiDeviceExecutor executor(*c.fusion, shippedOptions());
  EXPECT_EQ(stepsOf(executor), c.steps);
  expectMatchesUnsharded(*c.fusion, c.inputs, {0, 1, 2, 3}, c.tolerance);
}

TEST(MultiDeviceTest, PipelineStagesSendTheirPartsToTheNextMesh) {
  test::ShardedCase c = test::makeTwoStageCase();
  MultiDeviceExecutor executor(*c.fusion, shippedOptions());
  EXPECT_EQ(stepsOf(executor), c.steps);
  bool found = false;
  for (size_t s = 0; s < executor.segments().segments.size(); ++s) {
    const std::optional<Communication> step = executor.stepOf(static_cast<int32_t>(s));
    if (step && step->kind == Kind::SendRecv) {
      EXPECT_EQ(step->toString(), "send_recv from mesh{0, 1} to mesh{2, 3}");
      EXPECT_EQ(host::sendRecvRoles(*step, 1).send_to, 3);
      EXPECT_EQ(host::sendRecvRoles(*step, 1).receive_from, std::nullopt);
      EXPECT_EQ(host::sendRecvRoles(*step, 2).receive_from, 0);
      EXPECT_EQ(host::sendRecvRoles(*step, 2).send_to, std::nullopt);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  expectMatchesUnsharded(*c.fusion, c.inputs, {0, 1, 2, 3}, c.tolerance);
}

TEST(MultiDeviceTest, PipelineStagesOfOneDeviceEachOnlySendAndReceive) {
  test::ShardedCase c = test::makeTwoStageCase(/*stage_size=*/1);
  MultiDeviceExecutor executor(*c.fusion, shippedOptions());
  EXPECT_EQ(stepsOf(executor), c.steps);
  expectMatchesUnsharded(*c.fusion, c.inputs, {0, 1}, c.tolerance);
}

// Stages whose meshes share devices: a device on both sends one part and receives another (a
// cycle where the meshes list the same devices in another order), or keeps its part where it
// holds the same position of both.
TEST(MultiDeviceTest, PipelineStagesOnMeshesThatShareDevices) {
  struct Meshes {
    DeviceMesh first;
    DeviceMesh second;
    int64_t sender;  // a device of both meshes, and what it sends to and receives from
    std::optional<int64_t> send_to;
    std::optional<int64_t> receive_from;
  };
  for (const Meshes& m : std::vector<Meshes>{
           {DeviceMesh({0, 1}), DeviceMesh({1, 2}), 1, 2, 0},
           {DeviceMesh({0, 1}), DeviceMesh({1, 0}), 0, 1, 1},
           {DeviceMesh({0, 1, 2, 3}), DeviceMesh({0, 3, 4, 1}), 0, 0, 0},
           {DeviceMesh({0, 1, 2, 3}, {2, 2}), DeviceMesh({2, 3, 0, 1}, {2, 2}), 3, 1, 1}}) {
    SCOPED_TRACE(m.first.toString() + " to " + m.second.toString());
    test::ShardedCase c = test::makeTwoStageCase(m.first, m.second);
    MultiDeviceExecutor executor(*c.fusion, shippedOptions());
    for (size_t s = 0; s < executor.segments().segments.size(); ++s) {
      const std::optional<Communication> step = executor.stepOf(static_cast<int32_t>(s));
      if (!step || step->kind != Kind::SendRecv) continue;
      const host::SendRecvRoles roles = host::sendRecvRoles(*step, m.sender);
      EXPECT_EQ(roles.send_to, m.send_to);
      EXPECT_EQ(roles.receive_from, m.receive_from);
    }
    std::set<int64_t> devices(m.first.devices().begin(), m.first.devices().end());
    devices.insert(m.second.devices().begin(), m.second.devices().end());
    expectMatchesUnsharded(*c.fusion, c.inputs, {devices.begin(), devices.end()}, c.tolerance);
  }
}

// Asked to (MultiDeviceOptions::steps_on_single_device_dims), a mesh of one device plans the
// steps of a larger mesh, on teams of one: the one-GPU tier runs every step path this way.
TEST(MultiDeviceTest, AMeshOfOneDevicePlansItsStepsWhenAsked) {
  MultiDeviceOptions multidevice;
  multidevice.steps_on_single_device_dims = true;
  for (const std::string& name : test::shardedCaseNames()) {
    SCOPED_TRACE(name);
    test::ShardedCase c = test::makeShardedCase(name, 1);
    EXPECT_TRUE(stepsOf(MultiDeviceExecutor(*c.fusion, shippedOptions())).empty());
    MultiDeviceExecutor executor(*c.fusion, shippedOptions(), multidevice);
    EXPECT_EQ(stepsOf(executor), c.steps);
    const std::vector<HostTensor> expected =
        evaluateFusionTensors(*test::unshardedCopy(*c.fusion), std::vector<HostTensor>(c.inputs));
    const std::vector<std::vector<HostTensor>> outputs =
        test::runOnSimulatedMesh(executor, c.inputs, {0});
    ASSERT_EQ(outputs[0].size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o)
      test::expectClose(outputs[0][o], expected[o], c.tolerance);
  }
}

// An allgather and a reduce-scatter along the middle axis of [batch, sequence, hidden]: each
// step's buffers are laid out sequence-first, the producing region writes its part so (a
// stride_order its kernel absorbs), and each part is one block.
TEST(MultiDeviceTest, StepsAlongAMiddleAxisMoveBlocks) {
  test::ShardedCase c = test::makeShardedCase("middle_axis_steps", 2);
  MultiDeviceExecutor executor(*c.fusion, shippedOptions());
  std::vector<std::string> steps;
  int64_t stride_orders = 0;
  for (const Expr* expr : executor.fusion().exprs()) {
    if (expr->op() == OpKind::StrideOrder) ++stride_orders;
    if (std::optional<Communication> step = communicationOf(*expr)) {
      steps.push_back(step->toString());
      EXPECT_EQ(step->allocation_order, (std::vector<int64_t>{1, 0, 2}));
      EXPECT_EQ(expr->output(0)->as<TensorView>()->allocationOrder(),
                (std::vector<int64_t>{1, 0, 2}));
      EXPECT_EQ(expr->input(0)->definition()->op(), OpKind::StrideOrder);
    }
  }
  EXPECT_EQ(steps, (std::vector<std::string>{
                       "allgather axis 1 over DIDx of mesh{0, 1}, laid out [1, 0, 2]",
                       "reduce_scatter sum axis 1 over DIDx of mesh{0, 1}, laid out [1, 0, 2]"}));
  EXPECT_EQ(stride_orders, 2);
  EXPECT_EQ(
      executor.program().toString(),
      "%0 = allocate float32[s0, s1, s2] laid out [1, 0, 2] on mesh{0, 1} axis 1 over DIDx  (T11)\n"
      "%1 = allocate bfloat16[s6, s7, s10] laid out [1, 0, 2] on mesh{0, 1} partial sum over DIDx"
      "  (T12)\n"
      "launch segment 0 (T0, T2, T3) -> (%0, %1)\n"
      "%2 = allocate float32[s0, s1, s2] laid out [1, 0, 2] on mesh{0, 1} replicated  (T8)\n"
      "communicate segment 1 (%0) -> (%2)\n"
      "deallocate %0\n"
      "%3 = allocate bfloat16[s6, s7, s10] laid out [1, 0, 2] on mesh{0, 1} axis 1 over DIDx  "
      "(T10)\n"
      "communicate segment 2 (%1) -> (%3)\n"
      "deallocate %1\n"
      "wait segment 1\n"
      "wait segment 2\n"
      "%4 = allocate float32[s0, s1, s2] on mesh{0, 1} replicated  (T5)\n"
      "%5 = allocate bfloat16[s6, s7, s10] on mesh{0, 1} axis 1 over DIDx  (T7)\n"
      "launch segment 3 (T1, %2, %3) -> (%4, %5)\n"
      "deallocate %2\n"
      "deallocate %3\n"
      "return (%4, %5)\n");
}

// Steps left to the collectives' strided copies: a split axis outermost (a block already) or
// innermost (laying it out first would make the kernels on either side transpose), and a
// reduce-scatter whose result the caller gets.
TEST(MultiDeviceTest, StepsAlongOuterOrInnermostAxesKeepRowMajorBuffers) {
  const DeviceMesh mesh = DeviceMesh::ofSize(2);
  auto gathered = [&](int64_t axis) {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 3);
    TensorView* y = exp(tanh(x));
    fusion->addOutput(y);
    test::shardAxis(x, mesh, axis);
    y->setDeviceMesh(mesh);
    return fusion;
  };
  auto laidOut = [](const Fusion& definition) {
    MultiDeviceExecutor executor(definition, shippedOptions());
    int64_t steps = 0;
    bool laid_out = false;
    for (const Expr* expr : executor.fusion().exprs()) {
      if (std::optional<Communication> step = communicationOf(*expr)) {
        ++steps;
        laid_out = laid_out || !step->allocation_order.empty();
      }
    }
    EXPECT_EQ(steps, 1);
    return laid_out;
  };
  test::RandomTensors random(17);
  for (int64_t axis : {0, 1, 2}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    EXPECT_EQ(laidOut(*gathered(axis)), axis == 1);
    expectMatchesUnsharded(*gathered(axis), {random.uniform(DataType::Float32, {4, 6, 8})},
                           mesh.devices());
  }
  auto scattered = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*scattered, 3, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*scattered, 2, DataType::BFloat16);
  TensorView* out = matmul(a, b);
  scattered->addOutput(out);
  test::shardAxis(a, mesh, 2);
  test::shardAxis(b, mesh, 0);
  test::shardAxis(out, mesh, 1);
  EXPECT_FALSE(laidOut(*scattered));
  expectMatchesUnsharded(*scattered,
                         {random.uniform(DataType::BFloat16, {3, 4, 6}, -1, 1),
                          random.uniform(DataType::BFloat16, {6, 5}, -1, 1)},
                         mesh.devices(), test::partialSumsInBFloat16(2));
}

TEST(MultiDeviceTest, MovingBetweenMeshesNeedsOneShape) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2);
  TensorView* h = exp(x);
  TensorView* y = tanh(h);
  fusion->addOutput(y);
  x->setDeviceMesh(DeviceMesh({0, 1}));
  y->setDeviceMesh(DeviceMesh({2, 3, 4}));
  EXPECT_TRUE(test::throwsError([&] { MultiDeviceExecutor executor(*fusion, shippedOptions()); },
                                {"reads", "needs meshes of one shape"}));
}

TEST(MultiDeviceTest, BFloat16SumOverTheSplitAxisAllreducesInFloat32) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* s = sum(x, {1});
  fusion->addOutput(s);
  const DeviceMesh mesh = DeviceMesh::ofSize(4);
  test::shardAxis(x, mesh, 1);
  MultiDeviceExecutor executor(*fusion, shippedOptions());
  // The step sits between the float32 sum and the cast back to bfloat16.
  bool found = false;
  for (const Expr* expr : executor.fusion().exprs()) {
    if (std::optional<Communication> step = communicationOf(*expr)) {
      EXPECT_EQ(step->toString(), "allreduce sum over DIDx of mesh{0, 1, 2, 3}");
      EXPECT_EQ(expr->output(0)->as<TensorView>()->dtype(), DataType::Float32);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  test::RandomTensors random(83);
  expectMatchesUnsharded(*fusion, {random.uniform(DataType::BFloat16, {6, 64})}, mesh.devices());
}

TEST(MultiDeviceTest, GoldenProgramOfMatmulThenReduceScatter) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* c = matmul(a, b);
  TensorView* d = relu(c);
  fusion->addOutput(d);
  const DeviceMesh mesh = DeviceMesh::ofSize(2);
  test::shardAxis(a, mesh, 1);
  test::shardAxis(b, mesh, 0);
  test::shardAxis(d, mesh, 0);
  MultiDeviceExecutor executor(*fusion, shippedOptions());
  EXPECT_EQ(executor.program().toString(),
            "%0 = allocate bfloat16[s0, s3] on mesh{0, 1} partial sum over DIDx  (T2)\n"
            "launch segment 0 (T0, T1) -> (%0)\n"
            "%1 = allocate bfloat16[s0, s3] on mesh{0, 1} axis 0 over DIDx  (T5)\n"
            "communicate segment 1 (%0) -> (%1)\n"
            "deallocate %0\n"
            "wait segment 1\n"
            "%2 = allocate bfloat16[s0, s3] on mesh{0, 1} axis 0 over DIDx  (T3)\n"
            "launch segment 2 (%1) -> (%2)\n"
            "deallocate %1\n"
            "return (%2)\n")
      << executor.program().toString();
  // Before a run, describe() names the step and says the regions have no kernels yet.
  const std::string described = executor.describe();
  EXPECT_EQ(described.find("segment 0: compute region\n  (not run yet)\n"), 0u) << described;
  EXPECT_NE(described.find("segment 1: " + executor.stepOf(1)->toString() + "\n"),
            std::string::npos)
      << described;
  EXPECT_NE(described.find("segment 2: compute region\n  (not run yet)\n"), std::string::npos)
      << described;
}

// Work that reads no step's result runs before the step, whatever the definition's order:
// here the squares of x, defined after the sum whose partials are allreduced, join the first
// region (so nothing of them crosses the cut), and only what reads the allreduced sum waits.
TEST(MultiDeviceTest, WorkThatNeedsNoStepRunsBeforeIt) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::Float32);
  TensorView* row_sums = sum(x, {1});
  TensorView* squares = mul(x, x);
  TensorView* shifted = add(row_sums, 1.0);
  fusion->addOutput(shifted);
  fusion->addOutput(squares);
  const DeviceMesh mesh = DeviceMesh::ofSize(2);
  test::shardAxis(x, mesh, 1);
  test::shardAxis(squares, mesh, 1);
  shifted->setDeviceMesh(mesh);
  MultiDeviceExecutor executor(*fusion, shippedOptions());
  EXPECT_EQ(executor.program().toString(),
            "%0 = allocate float32[s0, s1] on mesh{0, 1} axis 1 over DIDx  (T2)\n"
            "%1 = allocate float32[s0] on mesh{0, 1} partial sum over DIDx  (T1)\n"
            "launch segment 0 (T0) -> (%0, %1)\n"
            "%2 = allocate float32[s0] on mesh{0, 1} replicated  (T4)\n"
            "communicate segment 1 (%1) -> (%2)\n"
            "deallocate %1\n"
            "wait segment 1\n"
            "%3 = allocate float32[s0] on mesh{0, 1} replicated  (T3)\n"
            "launch segment 2 (%2) -> (%3)\n"
            "deallocate %2\n"
            "return (%3, %0)\n")
      << executor.program().toString();
}

// Ops that need no step go first, but each mesh's in its own region: the second stage's
// scaling of its weight (no step before it) runs on the second stage's devices, apart from
// the first stage's matmul.
TEST(MultiDeviceTest, EarlyWorkOfAnotherStageGetsARegionOnItsMesh) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* w1 = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* w2 = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* h = relu(matmul(x, w1));
  TensorView* scaled = mul(w2, 2.0);
  TensorView* y = matmul(h, scaled);
  fusion->addOutput(y);
  const DeviceMesh first({0, 1});
  const DeviceMesh second({2, 3});
  x->setDeviceMesh(first);
  test::shardAxis(w1, first, 1);
  test::shardAxis(w2, second, 0);
  test::shardAxis(scaled, second, 0);
  y->setDeviceMesh(second);
  MultiDeviceExecutor executor(*fusion, shippedOptions());
  const std::string program = executor.program().toString();
  // The first region is the first stage's, the second the scaling on the second stage.
  EXPECT_NE(program.find("launch segment 0 (T0, T1)"), std::string::npos) << program;
  EXPECT_NE(program.find("launch segment 1 (T2)"), std::string::npos) << program;
  test::RandomTensors random(823);
  expectMatchesUnsharded(*fusion,
                         {random.uniform(DataType::BFloat16, {8, 6}, -1, 1),
                          random.uniform(DataType::BFloat16, {6, 10}, -1, 1),
                          random.uniform(DataType::BFloat16, {10, 4}, -1, 1)},
                         {0, 1, 2, 3}, test::partialSumsInBFloat16(2));
}

TEST(MultiDeviceTest, RefusesWhatItCannotRunNamingTheTensor) {
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeInputTensor(*fusion, {DataType::Float32, {8, 4}});
    fusion->addOutput(exp(x));
    test::shardAxis(x, DeviceMesh::ofSize(2), 0);
    EXPECT_TRUE(test::throwsError([&] { MultiDeviceExecutor executor(*fusion); },
                                  {"fusion input T0 axis 0 is split over DIDx "
                                   "but its extent is fixed at 8"}));
  }
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2);
    TensorView* y = makeSymbolicTensor(*fusion, 2);
    fusion->addOutput(add(x, y));
    test::shardAxis(x, DeviceMesh::ofSize(2), 0);
    y->setDeviceMesh(DeviceMesh({2, 3, 4, 5}));
    EXPECT_TRUE(test::throwsError([&] { MultiDeviceExecutor executor(*fusion); },
                                  {"reads T1 on mesh{2, 3, 4, 5}", "needs meshes of one shape"}));
  }
  {
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 2);
    fusion->addOutput(exp(x));
    EXPECT_TRUE(test::throwsError([&] { MultiDeviceExecutor executor(*fusion); },
                                  {"places no tensor on a device mesh"}));
  }
  {
    // Parts whose split axis is not the same size on every device: the allgather sees it.
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 1);
    TensorView* y = exp(x);
    fusion->addOutput(y);
    test::shardAxis(x, DeviceMesh::ofSize(2), 0);
    y->setDeviceMesh(DeviceMesh::ofSize(2));
    MultiDeviceExecutor executor(*fusion, shippedOptions());
    test::RandomTensors random(5);
    const std::vector<HostTensor> parts = {random.uniform(DataType::Float32, {3}),
                                           random.uniform(DataType::Float32, {4})};
    host::SimulatedMesh mesh(std::chrono::seconds(30));
    const std::vector<std::exception_ptr> failures =
        mesh.runEach({0, 1}, [&](int64_t device, host::Collectives& collectives) {
          RunOptions options;
          options.reference_evaluator = true;
          executor.run({parts[static_cast<size_t>(device)]}, collectives, options);
        });
    ASSERT_TRUE(failures[0] && failures[1]);
    // The device that completes the step reports the mismatch; the other stops with it.
    const int64_t reported = std::count_if(failures.begin(), failures.end(), [](auto failure) {
      return test::throwsError([&] { std::rethrow_exception(failure); },
                               {"allgather axis 0 over DIDx of mesh{0, 1}: the devices' parts "
                                "differ: float32[3]"});
    });
    EXPECT_EQ(reported, 1);
  }
  {
    // A device on none of the definition's meshes.
    auto fusion = std::make_unique<Fusion>();
    TensorView* x = makeSymbolicTensor(*fusion, 1);
    fusion->addOutput(exp(x));
    test::shardAxis(x, DeviceMesh({0, 1}), 0);
    MultiDeviceExecutor executor(*fusion, shippedOptions());
    host::SimulatedMesh mesh;
    test::RandomTensors random(7);
    EXPECT_TRUE(test::throwsError(
        [&] { executor.run({random.uniform(DataType::Float32, {4})}, mesh.device(5)); },
        {"device 5 is on none of the definition's meshes (mesh{0, 1})"}));
  }
}

TEST(MultiDeviceTest, AStepNobodyJoinsTimesOutNamingTheMissingDevices) {
  host::SimulatedMesh mesh(std::chrono::milliseconds(50));
  Communication step;
  step.kind = Kind::Allreduce;
  step.mesh = DeviceMesh::ofSize(3);
  test::RandomTensors random(9);
  EXPECT_TRUE(test::throwsError(
      [&] {
        mesh.device(0).run(step, {0, 1, 2}, random.uniform(DataType::Float32, {4}));
      },
      {"device 0 waited 50 ms in allreduce sum over DIDx of mesh{0, 1, 2} for devices 1 2"}));
}

}  // namespace
}  // namespace braze

namespace braze {
namespace {

// A sharded axis beside a stream axis: the allgather of each chunk runs in the stream loop of
// the work that reads it, so the transfer of chunk i + 1 overlaps the compute of chunk i.
// x: [chunks, rows split over DIDx, K]; y (replicated) streamed over its chunks.
std::unique_ptr<Fusion> pipelinedAllgather(int64_t n) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 3);
  TensorView* e = exp(x);
  TensorView* y = mul(e, e);
  TensorView* r = sum(y, {2});
  fusion->addOutput(y);
  fusion->addOutput(r);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  test::shardAxis(x, mesh, 1);
  for (TensorView* tv : {y, r}) {
    tv->setDeviceMesh(mesh);
    tv->parallelize(0, ParallelType::Stream);
  }
  return fusion;
}

// The partial sums of each chunk are reduce-scattered in the loop that computes them: x:
// [chunks, M, K] with K split over DIDx; the row sums, streamed over the chunks, end split by M.
std::unique_ptr<Fusion> pipelinedReduceScatter(int64_t n) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 3);
  TensorView* rows = sum(mul(x, x), {2});
  fusion->addOutput(rows);
  const DeviceMesh mesh = DeviceMesh::ofSize(n);
  test::shardAxis(x, mesh, 2);
  test::shardAxis(rows, mesh, 1);
  rows->parallelize(0, ParallelType::Stream);
  return fusion;
}

class PipelinedMeshTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(PipelinedMeshTest, EachChunksPartialSumsAreReduceScatteredInItsLoop) {
  const int64_t n = GetParam();
  std::unique_ptr<Fusion> fusion = pipelinedReduceScatter(n);
  MultiDeviceExecutor executor(*fusion, shippedOptions());
  EXPECT_EQ(stepsOf(executor), std::vector<Kind>{Kind::ReduceScatter});
  const std::string program = executor.program().toString();
  EXPECT_NE(program.find("\n  communicate segment"), std::string::npos) << program;  // in a loop
  test::RandomTensors random(101 + n);
  expectMatchesUnsharded(*fusion, {random.uniform(DataType::Float32, {3, 2 * n, 4 * n})},
                         DeviceMesh::ofSize(n).devices());
}

TEST_P(PipelinedMeshTest, EachChunksAllgatherRunsInTheLoopOfItsReaders) {
  const int64_t n = GetParam();
  std::unique_ptr<Fusion> fusion = pipelinedAllgather(n);
  test::RandomTensors random(97 + n);
  expectMatchesUnsharded(*fusion, {random.uniform(DataType::Float32, {3, 2 * n, 8})},
                         DeviceMesh::ofSize(n).devices());
}

INSTANTIATE_TEST_SUITE_P(Meshes, PipelinedMeshTest, ::testing::Values(2, 4, 8),
                         [](const auto& info) { return "of" + std::to_string(info.param); });

TEST(MultiDeviceTest, GoldenProgramOfAPipelinedAllgather) {
  MultiDeviceExecutor executor(*pipelinedAllgather(2), shippedOptions());
  // Each iteration, on its pool stream, gathers its chunk into a ring slot and computes on it:
  // the gather of chunk i + 1 runs while chunk i computes on another stream.
  EXPECT_EQ(executor.program().toString(),
            "%0 = allocate float32[s0, s1, s2] on mesh{0, 1} axis 1 over DIDx  (T1)\n"
            "launch segment 0 (T0) -> (%0)\n"
            "%s0 = get_current_stream\n"
            "%1 = allocate float32[s0, s1, s2] on mesh{0, 1} replicated ring of 4 slices of loop 0 "
            "along dim 0  (T4)\n"
            "%2 = allocate float32[s0, s1, s2] on mesh{0, 1} replicated  (T2)\n"
            "%3 = allocate float32[s0, s1] on mesh{0, 1} replicated  (T3)\n"
            "for loop 0 over T4 axis 0 per index (extent s0) on 4 streams:\n"
            "  set_current_stream loop 0 stream\n"
            "  synchronize %s0\n"
            "  %4 = select %0 dim 0, slice of loop 0\n"
            "  %5 = select %1 dim 0, ring slot of loop 0\n"
            "  communicate segment 1 (%4) -> (%5)\n"
            "  wait segment 1\n"
            "  %6 = select %2 dim 0, slice of loop 0\n"
            "  %7 = select %3 dim 0, slice of loop 0\n"
            "  launch segment 2 (%5) -> (%6, %7)\n"
            "set_current_stream %s0\n"
            "synchronize loop 0 streams\n"
            "deallocate %1\n"
            "deallocate %0\n"
            "return (%2, %3)\n")
      << executor.program().toString();
}

}  // namespace
}  // namespace braze
