// Running fusions from Python: arguments in (NumPy arrays as host tensors, DLPack tensors on a
// CUDA device without a copy, Python numbers as scalars), outputs back (NumPy arrays, DLPack
// capsules), the executor cache, the reference evaluator, the registry and the persistent cache.

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "braze/error.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/definition_cache.h"
#include "braze/runtime/device_dlpack.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/fusion_executor_cache.h"

namespace braze::python {

namespace {

/// A result on the device: a DLPack producer, so that torch.from_dlpack, cupy.from_dlpack or
/// jax.dlpack.from_dlpack take it without a copy.
struct DeviceResult {
  DeviceTensor tensor;
};

/// A fusion's executor cache, as `FusionDefinition.execute` uses it.
class Executor {
 public:
  explicit Executor(const std::shared_ptr<Fusion>& fusion)
      : cache_(std::make_shared<FusionExecutorCache>(*fusion)) {}
  explicit Executor(std::shared_ptr<FusionExecutorCache> cache) : cache_(std::move(cache)) {}

  /// The outputs for `inputs`: torch tensors when any input was one, else NumPy arrays for
  /// host results and DeviceTensor (a DLPack producer) for device ones. With `cuda_graph`,
  /// replayed as a CUDA graph (RunOptions::cuda_graph).
  py::list execute(const py::handle& inputs, const std::string& scheduler, int device,
                   bool cuda_graph) {
    RunArguments run = runArgumentsOf(inputs);
    RunOptions options;
    options.scheduler = scheduler;
    options.device = device;
    options.cuda_graph = cuda_graph;
    options.stream = reinterpret_cast<CUstream>(run.torch_stream);
    options.dump = dumpOptionsOfEnvironment();
    std::vector<FusionArgument> outputs;
    {
      py::gil_scoped_release released;
      outputs = cache_->run(run.arguments, options);
    }
    return resultsOf(outputs, run.torch);
  }

  py::dict counters() const {
    const ExecutorCacheCounters c = cache_->counters();
    py::dict d;
    d["runs"] = c.runs;
    d["hits"] = c.hits;
    d["heuristic_reuses"] = c.heuristic_reuses;
    d["misses"] = c.misses;
    d["kernels_compiled"] = c.kernels_compiled;
    d["kernels_from_store"] = c.kernels_from_store;
    d["runtimes_restored"] = c.runtimes_restored;
    d["compile_seconds"] = c.compile_seconds;
    d["evictions"] = c.evictions;
    return d;
  }

  std::string describeLastRuntime() const {
    const auto runtime = cache_->lastRuntime();
    return runtime ? runtime->describe() : std::string();
  }

  /// The last runtime's host program, as BRAZE_DUMP=host_ir prints it.
  std::string lastHostProgram() const {
    const auto runtime = cache_->lastRuntime();
    return runtime ? runtime->program().toString() : std::string();
  }

  /// The definition the cache runs (a copy of the one it was made from).
  std::shared_ptr<Fusion> fusion() const {
    return std::shared_ptr<Fusion>(cache_->fusion().clone());
  }

 private:
  std::shared_ptr<FusionExecutorCache> cache_;
};

py::list schedulers() {
  py::list result;
  const SchedulerRegistry& registry = defaultSchedulerRegistry();
  for (const SchedulerEntry& entry : registry.entries()) {
    py::dict d;
    d["id"] = entry.id;
    d["version"] = entry.version;
    d["rank"] = entry.rank;
    d["status"] = entry.status;
    d["reason"] = entry.reason;
    d["path"] = entry.path.string();
    d["description"] = entry.description;
    result.append(d);
  }
  return result;
}

}  // namespace

py::object deviceResultOf(const DeviceTensor& tensor) {
  return py::cast(DeviceResult{tensor});
}

void bindRuntime(py::module_& m) {
  py::class_<DeviceResult>(m, "DeviceTensor", "A result in GPU memory (a DLPack producer)")
      .def(
          "__dlpack__",
          [](const DeviceResult& result, const py::object& /*stream*/) {
            // Results are ready in the order of the stream Braze ran on (the default stream).
            return capsuleOf(result.tensor);
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const DeviceResult& result) {
             return py::make_tuple(static_cast<int>(kDLCUDA), result.tensor.device());
           })
      .def_property_readonly("shape", [](const DeviceResult& r) { return r.tensor.sizes(); })
      .def_property_readonly("dtype", [](const DeviceResult& r) { return r.tensor.dtype(); })
      .def("to_host", [](const DeviceResult& r) { return hostResultOf(r.tensor.toHost()); });

  py::class_<Executor>(m, "Executor", "The executor cache of one fusion (FusionExecutorCache)")
      .def(py::init<const std::shared_ptr<Fusion>&>(), py::arg("fusion"))
      .def("execute", &Executor::execute, py::arg("inputs"), py::arg("scheduler") = "",
           py::arg("device") = 0, py::arg("cuda_graph") = false,
           "The outputs: torch tensors when any input was one; else NumPy arrays for host "
           "results and DeviceTensor (a DLPack producer) for device ones. cuda_graph: replay "
           "as a CUDA graph; the outputs are then the graph's buffers, which the next graph "
           "run with the same signature overwrites")
      .def("counters", &Executor::counters)
      .def("describe_last_runtime", &Executor::describeLastRuntime)
      .def("last_host_program", &Executor::lastHostProgram)
      .def("fusion", &Executor::fusion);
  py::class_<DefinitionCache>(m, "DefinitionCache",
                              "Structurally equal fusions share one executor cache (LRU)")
      .def(py::init<size_t>(), py::arg("capacity") = 256)
      .def(
          "get",
          [](DefinitionCache& cache, const Fusion& fusion) { return Executor(cache.get(fusion)); },
          py::arg("fusion"))
      .def("size", &DefinitionCache::size)
      .def("counters", [](const DefinitionCache& cache) {
        const DefinitionCacheCounters c = cache.counters();
        py::dict d;
        d["hits"] = c.hits;
        d["misses"] = c.misses;
        d["evictions"] = c.evictions;
        return d;
      });
  m.def(
      "evaluate",
      [](const std::shared_ptr<Fusion>& fusion, const py::handle& inputs) {
        RunArguments run = runArgumentsOf(inputs);
        std::vector<EvaluatorArgument> arguments;
        for (size_t i = 0; i < run.arguments.size(); ++i) {
          FusionArgument& argument = run.arguments[i];
          if (auto* host = std::get_if<HostTensor>(&argument)) {
            arguments.emplace_back(std::move(*host));
          } else if (auto* scalar = std::get_if<ScalarValue>(&argument)) {
            arguments.emplace_back(*scalar);
          } else {
            BRAZE_THROW() << "evaluate: input " << i
                          << " is a device tensor; the reference evaluator takes host tensors "
                             "(tensor.cpu())";
          }
        }
        std::vector<FusionArgument> outputs;
        for (EvaluatorArgument& output : evaluateFusion(*fusion, arguments)) {
          if (auto* host = std::get_if<HostTensor>(&output)) {
            outputs.emplace_back(std::move(*host));
          } else {
            outputs.emplace_back(std::get<ScalarValue>(output));
          }
        }
        return resultsOf(outputs, run.torch);
      },
      py::arg("fusion"), py::arg("inputs"),
      "The fusion's outputs for host inputs, by the reference evaluator (torch CPU tensors "
      "for torch inputs)");
  m.def("schedulers", &schedulers,
        "Every scheduler the registry found: id, version, rank, status, reason, path");
}

}  // namespace braze::python
