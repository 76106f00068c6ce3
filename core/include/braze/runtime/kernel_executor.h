#pragma once

#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "braze/codegen/generated_kernel.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/kernel_arguments.h"
#include "braze/runtime/launch_params.h"

namespace braze {

class ExpressionEvaluator;

namespace runtime_detail {
struct ExtentEquality;
}  // namespace runtime_detail

/// One argument of a kernel run: a device tensor for a tensor input, a value for a scalar
/// input (in the order of the fusion's inputs).
using ExecutorArgument = std::variant<DeviceTensor, ScalarValue>;

/// Why `map` cannot describe a tensor of rank `rank` (its dims not a permutation of the
/// tensor's, more than 5 of them, a box entry outside 1..256), or nullopt.
std::optional<std::string> tensorMapParameterProblem(const TensorMapParameter& map, int64_t rank);

/// How a KernelExecutor runs.
struct ExecutorOptions {
  /// The device of launches whose inputs include no tensor (otherwise the inputs' device).
  int device = 0;
  /// `launch_params` prints every launch: geometry, index type and each parameter.
  DumpOptions dump = {};
};

/// What one launch needs, computed from the inputs without touching the GPU.
struct LaunchPlan {
  int device = 0;
  LaunchParams launch;
  /// What the executor passes for each kernel parameter, in parameter order.
  struct Parameter {
    /// OutputTensor and GlobalBuffer: the sizes of the contiguous tensor to allocate.
    std::vector<int64_t> sizes;
    /// Workspace: the bytes to allocate (zeroed).
    int64_t workspace_bytes = 0;
    /// InputScalar: the value passed.
    ScalarValue scalar = int64_t{0};
  };
  std::vector<Parameter> parameters;
};

/// Runs one generated, compiled kernel: execution only. For each run it validates the inputs
/// against the scheduled fusion (with the reference evaluator's rules), binds their sizes,
/// checks that the dims the fusion's ops pair without broadcasting have equal sizes (the
/// kernel indexes them with one loop), evaluates the launch geometry and the kernel's
/// launch-time checks, allocates outputs
/// (contiguous), global intermediates and zeroed workspaces, packs the parameters, and launches
/// with cuLaunchKernelEx on the given stream. The module is loaded once per device, in the
/// device's primary context.
///
/// Every check happens before the launch: a kernel is never launched with arguments it could
/// read or write out of bounds.
class KernelExecutor {
 public:
  /// `fusion` is the scheduled fusion `kernel` was generated from; it must outlive the
  /// executor. `compiled` is `kernel.source` compiled. Contradictions between the three (a
  /// parameter that is not the fusion's, a different kernel name, a fusion output without a
  /// parameter) are internal errors.
  KernelExecutor(const Fusion& fusion, GeneratedKernel kernel, CompiledKernel compiled,
                 ExecutorOptions options = {});
  ~KernelExecutor();
  KernelExecutor(const KernelExecutor&) = delete;
  KernelExecutor& operator=(const KernelExecutor&) = delete;

  /// Launches the kernel on `stream` (asynchronously) and returns the fusion's outputs in order.
  /// Outputs are allocated unless given in `outputs`: then one contiguous tensor per fusion
  /// output, with its dtype and sizes, on the launch device. Needs a GPU: without one, throws
  /// "no CUDA driver or device: ...".
  std::vector<DeviceTensor> run(const std::vector<ExecutorArgument>& inputs,
                                CUstream stream = nullptr, std::vector<DeviceTensor> outputs = {});

  /// Validates `inputs` and computes the launch plan, without touching the GPU.
  LaunchPlan plan(const std::vector<ExecutorArgument>& inputs) const;

  /// What plan() checks of arguments with these sizes, without data or a GPU: the fusion's
  /// inputs, the extents the kernel assumes equal, its launch bounds and every launch check
  /// (a size its vector accesses need divisible, 32-bit offsets). Binds the extents in
  /// `scalars` and returns the launch. The CPU path runs it too, so a kernel that a GPU would
  /// refuse for these sizes is refused there, with the same message.
  LaunchParams checkArguments(const std::vector<ArgumentInfo>& infos,
                              ExpressionEvaluator& scalars) const;

  /// Packs the kernel's parameters for `plan`: inputs from `inputs`, outputs from `outputs`
  /// (one per fusion output), and for each GlobalBuffer or Workspace parameter the pointer at
  /// its position in `allocations` (one entry per parameter; others ignored). Checks the
  /// alignment the kernel's vector accesses need. Needs no GPU.
  KernelArguments packArguments(const LaunchPlan& plan, const std::vector<ExecutorArgument>& inputs,
                                const std::vector<DeviceTensor>& outputs,
                                const std::vector<CUdeviceptr>& allocations) const;

  /// The loaded function for a launch with `plan`, after checking the plan's block against
  /// what the function allows on its device and opting in to the plan's dynamic shared memory:
  /// for callers that pack and launch themselves (FusionKernelRuntime's frozen launches).
  /// Loads the module on first use. Needs a GPU.
  CUfunction prepareLaunch(const LaunchPlan& plan);

  const Fusion& fusion() const { return fusion_; }
  const GeneratedKernel& generatedKernel() const { return kernel_; }
  const CompiledKernel& compiledKernel() const { return compiled_; }

 private:
  struct LoadedFunction {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    int max_threads_per_block = 0;
    int64_t dynamic_shared_memory_limit = 48 * 1024;  ///< what the function allows now
    bool non_portable_clusters = false;               ///< opted in to clusters beyond 8 CTAs
  };

  struct CachedPlan;  // the last plan run() used and the arguments it was made for
  /// plan(inputs), reused (not copied) when the inputs have the previous launch's shapes,
  /// strides, dtypes, devices and scalar values.
  std::shared_ptr<const LaunchPlan> cachedPlan(const std::vector<ExecutorArgument>& inputs);

  /// Checks the generated kernel against the fusion; returns the parameter of each output.
  std::vector<size_t> checkContract() const;
  LoadedFunction& load(int device);
  /// Compiles the kernel again with a register limit that lets blocks of `threads` launch,
  /// and drops the loaded modules (called with mutex_ held).
  void recompileForBlock(int64_t threads);
  std::vector<DeviceTensor> checkOrAllocateOutputs(const LaunchPlan& plan,
                                                   std::vector<DeviceTensor> outputs) const;
  void dumpLaunch(const LaunchPlan& plan, const std::vector<ExecutorArgument>& inputs,
                  const std::vector<DeviceTensor>& outputs,
                  const std::vector<CUdeviceptr>& allocations) const;

  const Fusion& fusion_;
  GeneratedKernel kernel_;
  CompiledKernel compiled_;
  ExecutorOptions options_;
  std::vector<size_t> output_parameters_;  // kernel parameter of each fusion output
  std::vector<runtime_detail::ExtentEquality> extent_equalities_;
  std::mutex mutex_;  // guards loaded_
  std::map<int, LoadedFunction> loaded_;
  std::mutex plan_mutex_;  // guards last_plan_
  std::unique_ptr<CachedPlan> last_plan_;
};

}  // namespace braze
