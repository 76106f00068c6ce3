// Running a frozen plan as a CUDA graph: one graph per plan and stream, built from the plan's
// launches with every buffer in memory the graph owns, so a replay is one cuGraphLaunch plus an
// update of the kernels whose inputs moved.

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/primary_context.h"
#include "braze/error.h"
#include "braze/runtime/fusion_kernel_runtime.h"

namespace braze {

using host::SlotKind;
using host::ValueRef;

struct ExecutionPlan::GraphInstance {
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::mutex mutex;  // one replay at a time: replays patch the parameters below
  std::vector<std::shared_ptr<driver::DeviceMemory>> buffers;
  std::vector<std::shared_ptr<driver::DeviceMemory>> temporaries;
  struct Node {
    CUgraphNode node = nullptr;
    size_t launch = 0;
    std::vector<std::byte> parameters;
    std::vector<void*> pointers;
    CUDA_KERNEL_NODE_PARAMS params{};
  };
  std::vector<Node> nodes;
  /// The data pointer of each fusion input as the graph last saw it.
  std::vector<CUdeviceptr> inputs;
  /// Why the graph could not be built; the plan then runs directly on this stream.
  std::string failure;

  ~GraphInstance() { clear(); }
  /// Back to nothing built: what a failed build leaves behind is dropped, not reused.
  void clear() {
    const driver::DriverApi& api = driver::driverApi();
    if (exec != nullptr) api.graphExecDestroy(exec);
    if (graph != nullptr) api.graphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    buffers.clear();
    temporaries.clear();
    nodes.clear();
    inputs.clear();
  }
};

ExecutionPlan::ExecutionPlan() = default;
ExecutionPlan::~ExecutionPlan() = default;

namespace {

CUdeviceptr inputPointer(const std::vector<FusionArgument>& arguments, int32_t index) {
  const auto* tensor = std::get_if<DeviceTensor>(&arguments[static_cast<size_t>(index)]);
  return tensor != nullptr ? tensor->data() : 0;
}

void patch(std::vector<std::byte>& parameters, size_t offset, CUdeviceptr pointer) {
  std::memcpy(parameters.data() + offset, &pointer, sizeof(pointer));
}

// Builds `instance`'s graph for `plan` on `stream`: buffers of its own, one kernel node per
// launch, edges from the plan's stream order, instantiated. Throws on a driver failure.
void buildGraph(const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments,
                CUstream stream, ExecutionPlan::GraphInstance& instance) {
  const driver::DriverApi& api = driver::driverApi();
  // Every buffer lives as long as the graph; nothing is freed between its kernels.
  // An output written into an input has no buffer of its own.
  for (const ExecutionPlan::Buffer& buffer : plan.buffers) {
    instance.buffers.push_back(buffer.alias_input >= 0
                                   ? nullptr
                                   : driver::DeviceMemory::allocate(plan.device, buffer.bytes));
  }
  const CUdeviceptr workspace = plan.workspace_bytes > 0 ? plan.workspaceFor(stream) : 0;
  instance.inputs.resize(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i)
    instance.inputs[i] = inputPointer(arguments, static_cast<int32_t>(i));
  driver::checkDriver(api.graphCreate(&instance.graph, 0), "cuGraphCreate");
  // Launches on one stream run in order; a loop's pool streams start after the caller's work
  // before the loop (Fork) and the caller's work after it waits for them all (Join): the
  // graph's edges are those orders, so slices on different pool streams may run at once.
  // Each pool stream has its own grid-reduction workspace, as in FusionKernelRuntime::run.
  // after[lane]: the nodes (by position) the next launch on a lane waits for; lane 0 is the
  // caller's stream, lane k + 1 pool stream k.
  std::vector<std::vector<size_t>> after(static_cast<size_t>(plan.pool_streams) + 1);
  std::vector<CUdeviceptr> workspaces = {workspace};
  for (int32_t k = 0; k < plan.pool_streams && plan.workspace_bytes > 0; ++k) {
    instance.temporaries.push_back(
        driver::DeviceMemory::allocate(plan.device, plan.workspace_bytes));
    BRAZE_CU(memsetD8Async, instance.temporaries.back()->pointer(), 0, plan.workspace_bytes,
             stream);
    workspaces.push_back(instance.temporaries.back()->pointer());
  }
  std::vector<std::vector<size_t>> dependencies;  // per node
  for (const ExecutionPlan::Step& step : plan.steps) {
    const auto lane = static_cast<size_t>(step.stream + 1);
    if (step.kind == ExecutionPlan::Step::Kind::Fork) {
      after[lane] = after[0];
      continue;
    }
    if (step.kind == ExecutionPlan::Step::Kind::Join) {
      for (int32_t k = 0; k < step.stream; ++k) {
        const std::vector<size_t>& done = after[static_cast<size_t>(k) + 1];
        after[0].insert(after[0].end(), done.begin(), done.end());
      }
      continue;
    }
    if (step.kind != ExecutionPlan::Step::Kind::Launch) continue;
    const auto k = static_cast<size_t>(step.launch);
    const FrozenLaunch& launch = plan.launches[k];
    if (launch.function == nullptr) continue;  // no threads
    ExecutionPlan::GraphInstance::Node node;
    node.launch = k;
    node.parameters = launch.parameters;
    for (const FrozenLaunch::Pointer& pointer : launch.pointers) {
      pointer.patch(node.parameters,
                    pointer.source.kind == SlotKind::Buffer
                        ? instance.buffers[static_cast<size_t>(pointer.source.index)]->pointer()
                        : inputPointer(arguments, pointer.source.index));
    }
    for (const FrozenLaunch::Temporary& temporary : launch.temporaries) {
      instance.temporaries.push_back(driver::DeviceMemory::allocate(plan.device, temporary.bytes));
      patch(node.parameters, temporary.offset, instance.temporaries.back()->pointer());
    }
    for (const FrozenLaunch::Workspace& region : launch.workspaces)
      patch(node.parameters, region.parameter_offset, workspaces[lane] + region.block_offset);
    node.pointers.resize(launch.parameter_offsets.size());
    dependencies.push_back(after[lane]);
    instance.nodes.push_back(std::move(node));
    after[lane] = {instance.nodes.size() - 1};
  }
  // The parameter arrays point into each node's bytes: fixed once every node exists.
  for (size_t n = 0; n < instance.nodes.size(); ++n) {
    ExecutionPlan::GraphInstance::Node& node = instance.nodes[n];
    const FrozenLaunch& launch = plan.launches[node.launch];
    for (size_t i = 0; i < launch.parameter_offsets.size(); ++i)
      node.pointers[i] = node.parameters.data() + launch.parameter_offsets[i];
    CUDA_KERNEL_NODE_PARAMS& params = node.params;
    params.func = launch.function;
    params.gridDimX = static_cast<unsigned>(launch.launch.grid[0]);
    params.gridDimY = static_cast<unsigned>(launch.launch.grid[1]);
    params.gridDimZ = static_cast<unsigned>(launch.launch.grid[2]);
    params.blockDimX = static_cast<unsigned>(launch.launch.block[0]);
    params.blockDimY = static_cast<unsigned>(launch.launch.block[1]);
    params.blockDimZ = static_cast<unsigned>(launch.launch.block[2]);
    params.sharedMemBytes = static_cast<unsigned>(launch.launch.dynamic_shared_memory_bytes);
    params.kernelParams = node.pointers.data();
    std::vector<CUgraphNode> depends;
    for (size_t position : dependencies[n]) {
      const CUgraphNode before = instance.nodes[position].node;
      if (std::find(depends.begin(), depends.end(), before) == depends.end())
        depends.push_back(before);
    }
    driver::checkDriver(
        api.graphAddKernelNode(&node.node, instance.graph,
                               depends.empty() ? nullptr : depends.data(), depends.size(), &params),
        "cuGraphAddKernelNode");
    if (launch.launch.ctasPerCluster() != 1) {
      // A kernel node takes its cluster shape as a node attribute, as a launch does.
      CUlaunchAttributeValue cluster{};
      cluster.clusterDim.x = static_cast<unsigned>(launch.launch.cluster[0]);
      cluster.clusterDim.y = static_cast<unsigned>(launch.launch.cluster[1]);
      cluster.clusterDim.z = static_cast<unsigned>(launch.launch.cluster[2]);
      driver::checkDriver(api.graphKernelNodeSetAttribute(
                              node.node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &cluster),
                          "cuGraphKernelNodeSetAttribute", launch.launch.toString());
    }
    if (launch.launch.cooperative) {
      CUlaunchAttributeValue cooperative{};
      cooperative.cooperative = 1;
      driver::checkDriver(
          api.graphKernelNodeSetAttribute(node.node, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &cooperative),
          "cuGraphKernelNodeSetAttribute", launch.launch.toString());
    }
  }
  driver::checkDriver(api.graphInstantiate(&instance.exec, instance.graph, 0),
                      "cuGraphInstantiateWithFlags");
}

}  // namespace

ExecutionPlan::GraphInstance& ExecutionPlan::graphFor(CUstream stream) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& instance : graphs_) {
    if (instance->stream == stream) return *instance;
  }
  auto instance = std::make_unique<GraphInstance>();
  instance->stream = stream;
  graphs_.push_back(std::move(instance));
  return *graphs_.back();
}

std::vector<DeviceTensor> FusionKernelRuntime::runGraph(
    const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments,
    CUstream stream) const {
  if (!plan.copies.empty()) {
    // Copies from host memory would be captured with the addresses of this call's inputs.
    static std::once_flag logged;
    std::call_once(logged, [] {
      std::cerr << "braze: a run that copies host inputs itself is not replayed as a CUDA graph "
                   "(the graph would keep this call's host addresses); running it directly\n";
    });
    return run(plan, arguments, stream);
  }
  driver::makePrimaryContextCurrent(plan.device);
  const driver::DriverApi& api = driver::driverApi();
  ExecutionPlan::GraphInstance& instance = plan.graphFor(stream);
  std::lock_guard<std::mutex> lock(instance.mutex);

  if (!instance.failure.empty()) return run(plan, arguments, stream);
  if (instance.exec == nullptr) {
    try {
      buildGraph(plan, arguments, stream, instance);
    } catch (const Error& error) {
      instance.clear();
      instance.failure = error.what();
      std::cerr << "braze: a plan could not be built as a CUDA graph (" << instance.failure
                << "); it runs directly on this stream from now on\n";
      return run(plan, arguments, stream);
    }
  } else {
    // Inputs that moved: patch and update the kernels that read them.
    for (size_t i = 0; i < arguments.size(); ++i) {
      const CUdeviceptr now = inputPointer(arguments, static_cast<int32_t>(i));
      if (now == instance.inputs[i]) continue;
      instance.inputs[i] = now;
      for (ExecutionPlan::GraphInstance::Node& node : instance.nodes) {
        bool reads = false;
        for (const FrozenLaunch::Pointer& pointer : plan.launches[node.launch].pointers) {
          if (pointer.source == ValueRef{SlotKind::Input, static_cast<int32_t>(i)}) {
            pointer.patch(node.parameters, now);
            reads = true;
          }
        }
        if (reads) {
          driver::checkDriver(
              api.graphExecKernelNodeSetParams(instance.exec, node.node, &node.params),
              "cuGraphExecKernelNodeSetParams");
        }
      }
    }
  }
  driver::checkDriver(api.graphLaunch(instance.exec, stream), "cuGraphLaunch");

  return plan.outputTensors(arguments, instance.buffers);
}

}  // namespace braze
