// Running a frozen plan as a CUDA graph: one graph per plan and stream, built from the plan's
// launches and copies with every buffer in memory the graph owns, so a replay is one
// cuGraphLaunch plus an update of the kernels and copies whose inputs moved.

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/pinned_host_memory.h"
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
  std::vector<std::shared_ptr<void>> host_buffers;  ///< page-locked, for results copied back
  std::vector<std::shared_ptr<driver::DeviceMemory>> temporaries;
  CUcontext context = nullptr;  ///< where the copy nodes run
  struct Node {
    CUgraphNode node = nullptr;
    bool is_copy = false;
    size_t launch = 0;  ///< a kernel: its launch; a copy: its index in ExecutionPlan::copies
    std::vector<std::byte> parameters;
    std::vector<void*> pointers;
    CUDA_KERNEL_NODE_PARAMS params{};
    CUDA_MEMCPY3D copy{};
  };
  std::vector<Node> nodes;
  /// The data pointer of each fusion input (device or host) as the graph last saw it.
  std::vector<uintptr_t> inputs;
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
    host_buffers.clear();
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

// A fusion input's data pointer, device or host, as a number.
uintptr_t anyInputPointer(const std::vector<FusionArgument>& arguments, size_t index) {
  if (const auto* host = std::get_if<HostTensor>(&arguments[index]))
    return reinterpret_cast<uintptr_t>(host->data());
  return static_cast<uintptr_t>(inputPointer(arguments, static_cast<int32_t>(index)));
}

// The host tensor among `arguments` that is not page-locked, or -1: a graph's copy nodes read
// and write fixed host addresses with the copy engines, which needs page-locked memory. Only
// inputs at another address than `seen` (the graph's last, when built) are asked: a replay on
// unmoved inputs makes no driver call.
int32_t pageableHostInput(const std::vector<FusionArgument>& arguments,
                          const std::vector<uintptr_t>& seen) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const auto* host = std::get_if<HostTensor>(&arguments[i]);
    if (host == nullptr || host->numel() == 0) continue;
    if (i < seen.size() && seen[i] == reinterpret_cast<uintptr_t>(host->data())) continue;
    if (!driver::isPinnedHost(host->data())) return static_cast<int32_t>(i);
  }
  return -1;
}

// The copy node parameters of `copy`: one row of bytes between the memories it names.
CUDA_MEMCPY3D copyParams(const ExecutionPlan::MemoryCopy& copy,
                         const std::vector<FusionArgument>& arguments,
                         const ExecutionPlan::GraphInstance& instance) {
  CUDA_MEMCPY3D params{};
  params.WidthInBytes = copy.bytes;
  params.Height = 1;
  params.Depth = 1;
  auto hostAt = [&](const ValueRef& ref, int64_t offset) {
    char* base =
        ref.kind == SlotKind::Buffer
            ? static_cast<char*>(instance.host_buffers[static_cast<size_t>(ref.index)].get())
            : static_cast<char*>(
                  std::get<HostTensor>(arguments[static_cast<size_t>(ref.index)]).data());
    return base + offset;
  };
  auto deviceAt = [&](const ValueRef& ref, int64_t offset) {
    const CUdeviceptr base = ref.kind == SlotKind::Buffer
                                 ? instance.buffers[static_cast<size_t>(ref.index)]->pointer()
                                 : inputPointer(arguments, ref.index);
    return base + static_cast<CUdeviceptr>(offset);
  };
  const ValueRef& target = copy.target;
  const bool from_host = copy.direction == host::CopyDirection::HostToDevice;
  const bool to_host = copy.direction == host::CopyDirection::DeviceToHost;
  params.srcMemoryType = from_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (from_host) {
    params.srcHost = hostAt(copy.source, copy.source_offset);
  } else {
    params.srcDevice = deviceAt(copy.source, copy.source_offset);
  }
  params.dstMemoryType = to_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (to_host) {
    params.dstHost = hostAt(target, copy.target_offset);
  } else {
    params.dstDevice = deviceAt(target, copy.target_offset);
  }
  return params;
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
    instance.buffers.push_back(buffer.alias_input >= 0 || buffer.host
                                   ? nullptr
                                   : driver::DeviceMemory::allocate(plan.device, buffer.bytes));
    instance.host_buffers.push_back(buffer.host ? driver::allocatePinnedHost(buffer.bytes)
                                                : nullptr);
  }
  driver::checkDriver(api.ctxGetCurrent(&instance.context), "cuCtxGetCurrent");
  const CUdeviceptr workspace = plan.workspace_bytes > 0 ? plan.workspaceFor(stream) : 0;
  instance.inputs.resize(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) instance.inputs[i] = anyInputPointer(arguments, i);
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
    if (step.kind == ExecutionPlan::Step::Kind::Copy) {
      const ExecutionPlan::MemoryCopy& copy = plan.copies[static_cast<size_t>(step.launch)];
      if (copy.bytes == 0) continue;
      ExecutionPlan::GraphInstance::Node node;
      node.is_copy = true;
      node.launch = static_cast<size_t>(step.launch);
      node.copy = copyParams(copy, arguments, instance);
      dependencies.push_back(after[lane]);
      instance.nodes.push_back(std::move(node));
      after[lane] = {instance.nodes.size() - 1};
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
    std::vector<CUgraphNode> depends;
    for (size_t position : dependencies[n]) {
      const CUgraphNode before = instance.nodes[position].node;
      if (std::find(depends.begin(), depends.end(), before) == depends.end())
        depends.push_back(before);
    }
    if (node.is_copy) {
      driver::checkDriver(api.graphAddMemcpyNode(&node.node, instance.graph,
                                                 depends.empty() ? nullptr : depends.data(),
                                                 depends.size(), &node.copy, instance.context),
                          "cuGraphAddMemcpyNode");
      continue;
    }
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

namespace {

// Launches `plan` on `stream` as its CUDA graph, building it on first use and updating the
// kernels and copies whose inputs moved; nullptr where the plan must run directly instead
// (a graph that could not be built, or host inputs that are not page-locked), with the reason
// logged.
ExecutionPlan::GraphInstance* launchGraph(const ExecutionPlan& plan,
                                          const std::vector<FusionArgument>& arguments,
                                          CUstream stream) {
  driver::makePrimaryContextCurrent(plan.device);
  const driver::DriverApi& api = driver::driverApi();
  ExecutionPlan::GraphInstance& instance = plan.graphFor(stream);
  std::unique_lock<std::mutex> lock(instance.mutex);

  if (!instance.failure.empty()) return nullptr;
  if (!plan.copies.empty()) {
    const int32_t pageable = pageableHostInput(arguments, instance.inputs);
    if (pageable >= 0) {
      static std::once_flag logged;
      std::call_once(logged, [pageable] {
        std::cerr << "braze: input " << pageable
                  << " is pageable host memory, which a CUDA graph's copies cannot read; this "
                     "run goes directly (pin the inputs, e.g. torch's pin_memory(), to replay "
                     "it as a graph)\n";
      });
      return nullptr;
    }
  }
  if (instance.exec == nullptr) {
    try {
      buildGraph(plan, arguments, stream, instance);
    } catch (const Error& error) {
      instance.clear();
      instance.failure = error.what();
      std::cerr << "braze: a plan could not be built as a CUDA graph (" << instance.failure
                << "); it runs directly on this stream from now on\n";
      return nullptr;
    }
  } else {
    // Inputs that moved: patch and update the kernels and copies that read them.
    for (size_t i = 0; i < arguments.size(); ++i) {
      const uintptr_t now = anyInputPointer(arguments, i);
      if (now == instance.inputs[i]) continue;
      instance.inputs[i] = now;
      const ValueRef input{SlotKind::Input, static_cast<int32_t>(i)};
      for (ExecutionPlan::GraphInstance::Node& node : instance.nodes) {
        if (node.is_copy) {
          const ExecutionPlan::MemoryCopy& copy = plan.copies[node.launch];
          if (copy.source != input && copy.target != input) continue;
          node.copy = copyParams(copy, arguments, instance);
          driver::checkDriver(api.graphExecMemcpyNodeSetParams(instance.exec, node.node, &node.copy,
                                                               instance.context),
                              "cuGraphExecMemcpyNodeSetParams");
          continue;
        }
        bool reads = false;
        for (const FrozenLaunch::Pointer& pointer : plan.launches[node.launch].pointers) {
          if (pointer.source == input) {
            pointer.patch(node.parameters, static_cast<CUdeviceptr>(now));
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
  return &instance;
}

}  // namespace

std::vector<DeviceTensor> FusionKernelRuntime::runGraph(
    const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments,
    CUstream stream) const {
  BRAZE_INTERNAL_CHECK(!plan.host_results)
      << "runGraph: this plan returns host tensors; run it with runGraphToHost";
  ExecutionPlan::GraphInstance* instance = launchGraph(plan, arguments, stream);
  if (instance == nullptr) return run(plan, arguments, stream);
  return plan.outputTensors(arguments, instance->buffers);
}

std::vector<HostTensor> FusionKernelRuntime::runGraphToHost(
    const ExecutionPlan& plan, const std::vector<FusionArgument>& arguments,
    CUstream stream) const {
  ExecutionPlan::GraphInstance* instance = launchGraph(plan, arguments, stream);
  if (instance == nullptr) return runToHost(plan, arguments, stream);
  // The results are read by the caller as soon as this returns.
  BRAZE_CU(streamSynchronize, stream);
  return plan.hostOutputTensors(arguments, instance->host_buffers);
}

}  // namespace braze
