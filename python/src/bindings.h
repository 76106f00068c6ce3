#pragma once

// What the binding files share: the handles Python holds on a fusion and its values, and the
// conversion of Python arguments to op operands.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "braze/ir/fusion.h"
#include "braze/ir/tensor_view.h"
#include "braze/ops/operand.h"
#include "braze/runtime/fusion_kernel_runtime.h"

namespace braze::python {

namespace py = pybind11;

/// A value of a fusion, as Python holds it: the Val and the fusion that owns it, kept alive as
/// long as any value of it is (a Val outliving its fusion would dangle).
struct Value {
  std::shared_ptr<Fusion> fusion;
  Val* val = nullptr;

  bool isTensor() const { return val->isA<TensorView>(); }
  /// The tensor, or a braze.Error naming `op` and `argument` when this is a scalar.
  TensorView* tensor(std::string_view op, std::string_view argument) const;
};

/// A Python argument of an op (a Value, a bool, an int or a float) as an Operand; anything else
/// is a TypeError naming `op` and `argument`.
Operand toOperand(const py::handle& object, std::string_view op, std::string_view argument);
/// The tensor a Python argument must be.
TensorView* toTensor(const py::handle& object, std::string_view op, std::string_view argument);
/// The inputs of a run from Python (a list or tuple), each without a copy: torch tensors
/// through torch's C++ DLPack export (CUDA ones as device tensors, host ones as host tensors,
/// 0-d host ones as numbers), NumPy arrays as host tensors, other CUDA tensors with __dlpack__
/// (CuPy, JAX) and DLPack capsules as device tensors, Python numbers as scalars; nested lists
/// flattened (vector inputs). `torch` tells whether any input was a torch tensor.
struct RunArguments {
  std::vector<FusionArgument> arguments;
  bool torch = false;
  /// torch's current stream on the GPU of the inputs' first torch CUDA tensor, as a raw handle
  /// (0: the legacy default stream, or no such input). Braze runs there, so its kernels come
  /// after the work that produced the inputs and before the work that reads the outputs,
  /// whichever stream the caller made current.
  uintptr_t torch_stream = 0;
};
RunArguments runArgumentsOf(const py::handle& inputs);
/// BRAZE_DUMP, read once per process: Python is the edge where it is read
/// (braze/runtime/dump_options.h).
const DumpOptions& dumpOptionsOfEnvironment();
std::vector<FusionArgument> argumentsOf(const py::handle& inputs);
/// The results of a run: torch tensors when `torch` (through torch's C++ DLPack import), else
/// NumPy arrays for host tensors and DeviceTensor objects for device ones; numbers for scalars.
py::list resultsOf(const std::vector<FusionArgument>& outputs, bool torch);
/// A device tensor as a DLPack capsule, and a host tensor as a NumPy array (no copies).
py::capsule capsuleOf(const DeviceTensor& tensor);
py::object hostResultOf(const HostTensor& tensor);
/// The result of an op, tied to the fusion of `like`.
Value wrap(const std::shared_ptr<Fusion>& fusion, Val* val);

void bindIr(py::module_& m);
void bindOps(py::module_& m);
void bindRuntime(py::module_& m);
void bindSched(py::module_& m);
void bindRepro(py::module_& m);
/// use_persistent_cache, cache_directory and the cache folder functions braze.cache wraps.
void bindCache(py::module_& m);
void bindMultidevice(py::module_& m);
/// The scheduling methods of tensor values (split, merge, ...), added to the Value class.
void bindScheduleMethods(py::class_<Value>& value);
/// ParallelType, MemoryType, Axis, and the propagation, inlining and compile functions in
/// `sched`.
void bindSchedule(py::module_& m, py::module_& sched);
/// A device result as Python receives it (a DLPack producer).
py::object deviceResultOf(const DeviceTensor& tensor);

}  // namespace braze::python
