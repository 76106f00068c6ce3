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
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"

namespace braze::python {

namespace {

DataType dtypeOfArray(const py::array& array, size_t index) {
  const py::dtype dtype = array.dtype();
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'b' && size == 1) return DataType::Bool;
  if (kind == 'i' && size == 4) return DataType::Int32;
  if (kind == 'i' && size == 8) return DataType::Int64;
  if (kind == 'f' && size == 2) return DataType::Float16;
  if (kind == 'f' && size == 4) return DataType::Float32;
  if (kind == 'f' && size == 8) return DataType::Float64;
  BRAZE_THROW() << "input " << index << ": NumPy dtype " << std::string(py::str(py::handle(dtype)))
                << " has no Braze dtype (bool, int32, int64, float16, float32, float64; "
                   "bfloat16 and float8 come through torch tensors, or cast a float32 input "
                   "in the fusion)";
}

py::dtype arrayDtypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::Bool:
      return py::dtype::of<bool>();
    case DataType::Int32:
      return py::dtype::of<int32_t>();
    case DataType::Int64:
    case DataType::Index:
      return py::dtype::of<int64_t>();
    case DataType::Float16:
      return py::dtype("float16");
    case DataType::Float32:
      return py::dtype::of<float>();
    case DataType::Float64:
      return py::dtype::of<double>();
    // NumPy has no float8: a host result is its bits, one uint8 per element (decode them, or
    // cast to float32 in the fusion).
    case DataType::Float8_e4m3fn:
    case DataType::Float8_e5m2:
      return py::dtype::of<uint8_t>();
    case DataType::BFloat16:
      break;
  }
  BRAZE_THROW() << "a bfloat16 result on the host has no NumPy dtype; run the fusion on the GPU "
                   "with torch tensors to get bfloat16 tensors back";
}

/// A NumPy array as a host tensor, without a copy; the array stays alive as long as the tensor.
HostTensor hostTensorOf(const py::array& array, size_t index) {
  const DataType dtype = dtypeOfArray(array, index);
  std::vector<int64_t> sizes(array.shape(), array.shape() + array.ndim());
  std::vector<int64_t> strides;
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    BRAZE_USER_CHECK(array.strides(d) % array.itemsize() == 0 && array.strides(d) >= 0)
        << "input " << index << ": dim " << d << " has a stride of " << array.strides(d)
        << " bytes, not a non-negative multiple of the element size " << array.itemsize()
        << "; pass a contiguous copy (numpy.ascontiguousarray)";
    strides.push_back(array.strides(d) / array.itemsize());
  }
  // The owner releases the array with the GIL held, whichever thread drops the last view.
  auto* keeper = new py::object(array);
  std::shared_ptr<void> owner(keeper, [](void* object) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(object);
  });
  return HostTensor::borrow(dtype, std::move(sizes), std::move(strides),
                            const_cast<void*>(array.data()), std::move(owner));
}

/// A DLPack capsule's CUDA tensor, without a copy (Braze takes the capsule's ownership).
DeviceTensor deviceTensorOf(const py::capsule& capsule, size_t index);

/// A DLPack producer (torch, CuPy, JAX) with its tensor on a CUDA device, without a copy.
DeviceTensor deviceTensorOf(const py::object& tensor, size_t index) {
  return deviceTensorOf(py::capsule(tensor.attr("__dlpack__")()), index);
}

DeviceTensor deviceTensorOf(const py::capsule& capsule, size_t index) {
  BRAZE_USER_CHECK(std::string(capsule.name()) == "dltensor")
      << "input " << index << ": __dlpack__ gave a capsule named '" << capsule.name()
      << "' (already consumed?)";
  auto* managed = static_cast<DLManagedTensor*>(capsule.get_pointer());
  // Braze owns it now: the consumer renames the capsule so its destructor leaves it alone.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  try {
    return deviceTensorFromDLPack(managed);
  } catch (const Error& error) {
    BRAZE_THROW() << "input " << index << ": " << error.what();
  }
}

FusionArgument argumentOf(const py::handle& object, size_t index) {
  // A capsule made by the caller first: the Python layer asks torch for one directly (its
  // Python __dlpack__ costs several microseconds a tensor).
  if (PyCapsule_CheckExact(object.ptr()))
    return deviceTensorOf(py::reinterpret_borrow<py::capsule>(object), index);
  if (py::isinstance<py::bool_>(object)) return ScalarValue(object.cast<bool>());
  if (py::isinstance<py::int_>(object)) return ScalarValue(object.cast<int64_t>());
  if (py::isinstance<py::float_>(object)) return ScalarValue(object.cast<double>());
  if (py::isinstance<py::array>(object)) return hostTensorOf(object.cast<py::array>(), index);
  if (py::hasattr(object, "__dlpack_device__")) {
    const auto device = object.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (device.first == kDLCUDA)
      return deviceTensorOf(py::reinterpret_borrow<py::object>(object), index);
  }
  throw py::type_error("input " + std::to_string(index) +
                       ": expected a NumPy array, a CUDA tensor with __dlpack__ (torch, CuPy, "
                       "JAX), or a Python number, not " +
                       std::string(py::str(py::type::of(object).attr("__name__"))));
}

}  // namespace

std::vector<FusionArgument> argumentsOf(const py::sequence& inputs) {
  std::vector<FusionArgument> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) arguments.push_back(argumentOf(inputs[i], i));
  return arguments;
}

namespace {

py::object arrayOf(const HostTensor& tensor) {
  std::vector<py::ssize_t> strides;
  const auto item = static_cast<py::ssize_t>(sizeInBytes(tensor.dtype()));
  for (int64_t stride : tensor.strides()) strides.push_back(stride * item);
  auto* kept = new HostTensor(tensor);
  py::capsule base(kept, [](void* p) { delete static_cast<HostTensor*>(p); });
  return py::array(arrayDtypeOf(tensor.dtype()),
                   std::vector<py::ssize_t>(tensor.sizes().begin(), tensor.sizes().end()), strides,
                   tensor.data(), base);
}

py::capsule capsuleOf(const DeviceTensor& tensor) {
  DLManagedTensor* managed = toDLPack(tensor);
  return py::capsule(managed, "dltensor", [](PyObject* capsule) {
    // An unconsumed capsule still owns its tensor.
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* owned = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (owned != nullptr && owned->deleter != nullptr) owned->deleter(owned);
    }
  });
}

/// A result on the device: a DLPack producer, so that torch.from_dlpack, cupy.from_dlpack or
/// jax.dlpack.from_dlpack take it without a copy.
struct DeviceResult {
  DeviceTensor tensor;
};

py::object outputOf(const FusionArgument& output) {
  if (const auto* host = std::get_if<HostTensor>(&output)) return arrayOf(*host);
  if (const auto* device = std::get_if<DeviceTensor>(&output))
    return py::cast(DeviceResult{*device});
  return std::visit([](auto v) -> py::object { return py::cast(v); },
                    std::get<ScalarValue>(output));
}

/// A fusion's executor cache, as `FusionDefinition.execute` uses it.
class Executor {
 public:
  explicit Executor(const std::shared_ptr<Fusion>& fusion)
      : cache_(std::make_shared<FusionExecutorCache>(*fusion)) {}
  explicit Executor(std::shared_ptr<FusionExecutorCache> cache) : cache_(std::move(cache)) {}

  py::list execute(const py::sequence& inputs, const std::string& scheduler, int device,
                   bool capsules) {
    std::vector<FusionArgument> arguments = argumentsOf(inputs);
    RunOptions options;
    options.scheduler = scheduler;
    options.device = device;
    std::vector<FusionArgument> outputs;
    {
      py::gil_scoped_release released;
      outputs = cache_->run(arguments, options);
    }
    py::list result;
    for (const FusionArgument& output : outputs) {
      const auto* tensor = std::get_if<DeviceTensor>(&output);
      result.append(capsules && tensor != nullptr ? py::object(capsuleOf(*tensor))
                                                  : outputOf(output));
    }
    return result;
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
      .def("to_host", [](const DeviceResult& r) { return arrayOf(r.tensor.toHost()); });

  py::class_<Executor>(m, "Executor", "The executor cache of one fusion (FusionExecutorCache)")
      .def(py::init<const std::shared_ptr<Fusion>&>(), py::arg("fusion"))
      .def("execute", &Executor::execute, py::arg("inputs"), py::arg("scheduler") = "",
           py::arg("device") = 0, py::arg("capsules") = false,
           "The outputs: NumPy arrays for host results, DeviceTensor (a DLPack producer) for "
           "device ones, or their DLPack capsules with capsules=True")
      .def("counters", &Executor::counters)
      .def("describe_last_runtime", &Executor::describeLastRuntime)
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
      [](const std::shared_ptr<Fusion>& fusion, const py::sequence& inputs) {
        std::vector<EvaluatorArgument> arguments;
        for (size_t i = 0; i < inputs.size(); ++i) {
          FusionArgument argument = argumentOf(inputs[i], i);
          if (auto* host = std::get_if<HostTensor>(&argument)) {
            arguments.emplace_back(*host);
          } else if (auto* scalar = std::get_if<ScalarValue>(&argument)) {
            arguments.emplace_back(*scalar);
          } else {
            BRAZE_THROW() << "evaluate: input " << i
                          << " is a device tensor; the reference evaluator takes host arrays";
          }
        }
        py::list result;
        for (const EvaluatorArgument& output : evaluateFusion(*fusion, arguments)) {
          if (const auto* host = std::get_if<HostTensor>(&output)) {
            result.append(arrayOf(*host));
          } else {
            result.append(std::visit([](auto v) -> py::object { return py::cast(v); },
                                     std::get<ScalarValue>(output)));
          }
        }
        return result;
      },
      py::arg("fusion"), py::arg("inputs"),
      "The fusion's outputs for host inputs, by the reference evaluator");
  m.def("schedulers", &schedulers,
        "Every scheduler the registry found: id, version, rank, status, reason, path");
  m.def("use_persistent_cache", &serde::useDefaultPersistentCache,
        "Keeps kernels and decisions in $BRAZE_CACHE_DIR (default ~/.cache/braze) for later "
        "processes");
  m.def("cache_directory", []() -> py::object {
    std::optional<std::filesystem::path> directory = serde::defaultCacheDirectory();
    if (!directory) return py::none();
    return py::str(directory->string());
  });
}

}  // namespace braze::python
