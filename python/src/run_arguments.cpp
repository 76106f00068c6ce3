// Python objects into a run and results back out. torch tensors are read through torch's C++
// DLPack export, called from here: on a cache hit a run from Python is this file, the executor
// cache's lookup and the launch, with no Python code in between.

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include "bindings.h"
#include "braze/error.h"
#include "braze/eval/dlpack_interop.h"
#include "braze/runtime/device_dlpack.h"
#include "braze/runtime/dump_options.h"

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

/// The DLManagedTensor inside a capsule named "dltensor", taken over: the capsule is renamed
/// as the DLPack protocol asks, so that its destructor leaves the tensor to Braze.
DLManagedTensor* takeCapsule(const py::handle& capsule, size_t index) {
  const char* name = PyCapsule_GetName(capsule.ptr());
  BRAZE_USER_CHECK(name != nullptr && std::string_view(name) == "dltensor")
      << "input " << index << ": a DLPack capsule named '" << (name ? name : "")
      << "' (already consumed?); pass each capsule once";
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), name));
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return managed;
}

/// A DLPack tensor by where it lives: CUDA memory as a device tensor; host memory as a host
/// tensor, or as a scalar when it is 0-d (a PyTorch 0-d CPU tensor is a number to a fusion).
FusionArgument argumentOfDLPack(DLManagedTensor* managed, size_t index) {
  try {
    if (managed != nullptr && managed->dl_tensor.device.device_type == kDLCUDA)
      return deviceTensorFromDLPack(managed);
    HostTensor host = fromDLPack(managed);
    if (host.rank() == 0) return host.atFlat(0);
    return host;
  } catch (const Error& error) {
    BRAZE_THROW() << "input " << index << ": " << error.what();
  }
}

/// torch's tensor type and its C++ DLPack entry points (torch._C._to_dlpack, _from_dlpack:
/// what Tensor.__dlpack__ and torch.from_dlpack call after their Python-level checks). Looked
/// up once torch has been imported by the user; Braze never imports torch itself.
struct Torch {
  PyTypeObject* tensor_type = nullptr;
  py::object to_dlpack;
  py::object from_dlpack;
  /// torch._C._cuda_getCurrentRawStream(device): null in a build of torch without CUDA.
  py::object current_raw_stream;
};

const Torch* torchIfImported() {
  static Torch torch;
  if (torch.tensor_type != nullptr) return &torch;
  PyObject* module = PyImport_GetModule(py::str("torch").ptr());
  if (module == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  py::object torch_module = py::reinterpret_steal<py::object>(module);
  py::object c = torch_module.attr("_C");
  torch.to_dlpack = c.attr("_to_dlpack");
  torch.from_dlpack = c.attr("_from_dlpack");
  if (py::hasattr(c, "_cuda_getCurrentRawStream"))
    torch.current_raw_stream = c.attr("_cuda_getCurrentRawStream");
  torch.tensor_type = reinterpret_cast<PyTypeObject*>(torch_module.attr("Tensor").ptr());
  // The type object lives as long as the torch module, which is never unloaded.
  return &torch;
}

FusionArgument argumentOf(const py::handle& object, size_t index, const Torch* torch,
                          bool& torch_io) {
  if (torch != nullptr && PyObject_TypeCheck(object.ptr(), torch->tensor_type)) {
    torch_io = true;
    py::object capsule = torch->to_dlpack(object);
    return argumentOfDLPack(takeCapsule(capsule, index), index);
  }
  // A capsule made by the caller (torch.utils.dlpack.to_dlpack, or any producer's).
  if (PyCapsule_CheckExact(object.ptr()))
    return argumentOfDLPack(takeCapsule(object, index), index);
  if (PyBool_Check(object.ptr())) return ScalarValue(object.ptr() == Py_True);
  if (PyLong_Check(object.ptr())) return ScalarValue(object.cast<int64_t>());
  if (PyFloat_Check(object.ptr())) return ScalarValue(PyFloat_AS_DOUBLE(object.ptr()));
  if (py::isinstance<py::array>(object)) return hostTensorOf(object.cast<py::array>(), index);
  if (py::hasattr(object, "__dlpack_device__")) {
    // CuPy, JAX and the like: their CUDA tensors without a copy.
    const auto device = object.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (device.first == kDLCUDA) {
      py::object capsule = object.attr("__dlpack__")();
      return argumentOfDLPack(takeCapsule(capsule, index), index);
    }
  }
  throw py::type_error("input " + std::to_string(index) +
                       ": expected a torch tensor, a NumPy array, a CUDA tensor with __dlpack__ "
                       "(CuPy, JAX), a Python number or a list of them, not " +
                       std::string(py::str(py::type::of(object).attr("__name__"))));
}

void appendArguments(const py::handle& inputs, const Torch* torch, RunArguments& run) {
  PyObject* sequence = inputs.ptr();
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  PyObject** items = PySequence_Fast_ITEMS(sequence);
  for (Py_ssize_t i = 0; i < count; ++i) {
    py::handle item(items[i]);
    if (PyList_Check(item.ptr()) || PyTuple_Check(item.ptr())) {
      // A list input is a vector of scalars (fd.define_vector): flattened in place.
      appendArguments(item, torch, run);
    } else {
      run.arguments.push_back(argumentOf(item, run.arguments.size(), torch, run.torch));
    }
  }
}

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

py::capsule capsuleOf(DLManagedTensor* managed) {
  return py::capsule(managed, "dltensor", [](PyObject* capsule) {
    // An unconsumed capsule still owns its tensor.
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* owned = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (owned != nullptr && owned->deleter != nullptr) owned->deleter(owned);
    }
  });
}

py::object scalarOf(const ScalarValue& value) {
  return std::visit([](auto v) -> py::object { return py::cast(v); }, value);
}

}  // namespace

RunArguments runArgumentsOf(const py::handle& inputs) {
  RunArguments run;
  if (!PyList_Check(inputs.ptr()) && !PyTuple_Check(inputs.ptr())) {
    throw py::type_error("the inputs must be a list or tuple, not " +
                         std::string(py::str(py::type::of(inputs).attr("__name__"))));
  }
  const Torch* torch = torchIfImported();
  appendArguments(inputs, torch, run);
  if (run.torch && torch != nullptr && torch->current_raw_stream) {
    for (const FusionArgument& argument : run.arguments) {
      const auto* device = std::get_if<DeviceTensor>(&argument);
      if (device == nullptr) continue;
      run.torch_stream = torch->current_raw_stream(device->device()).cast<uintptr_t>();
      break;
    }
  }
  return run;
}

std::vector<FusionArgument> argumentsOf(const py::handle& inputs) {
  return runArgumentsOf(inputs).arguments;
}

const DumpOptions& dumpOptionsOfEnvironment() {
  static const DumpOptions dump = DumpOptions::fromEnvironment();
  return dump;
}

py::capsule capsuleOf(const DeviceTensor& tensor) {
  return capsuleOf(toDLPack(tensor));
}

py::object hostResultOf(const HostTensor& tensor) {
  return arrayOf(tensor);
}

py::list resultsOf(const std::vector<FusionArgument>& outputs, bool torch_io) {
  const Torch* torch = torch_io ? torchIfImported() : nullptr;
  py::list results(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const FusionArgument& output = outputs[i];
    py::object result;
    if (const auto* device = std::get_if<DeviceTensor>(&output)) {
      result = torch != nullptr ? torch->from_dlpack(capsuleOf(*device)) : deviceResultOf(*device);
    } else if (const auto* host = std::get_if<HostTensor>(&output)) {
      result = torch != nullptr ? torch->from_dlpack(capsuleOf(toDLPack(*host))) : arrayOf(*host);
    } else {
      result = scalarOf(std::get<ScalarValue>(output));
    }
    PyList_SET_ITEM(results.ptr(), static_cast<Py_ssize_t>(i), result.release().ptr());
  }
  return results;
}

}  // namespace braze::python
