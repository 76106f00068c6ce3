#pragma once

// What the binding files share: the handles Python holds on a fusion and its values, and the
// conversion of Python arguments to op operands.

#include <pybind11/pybind11.h>

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
/// Arguments of a run from Python: NumPy arrays (host tensors, no copy), CUDA tensors with
/// __dlpack__ (device tensors, no copy), Python numbers (scalars).
std::vector<FusionArgument> argumentsOf(const py::sequence& inputs);
/// The result of an op, tied to the fusion of `like`.
Value wrap(const std::shared_ptr<Fusion>& fusion, Val* val);

void bindIr(py::module_& m);
void bindOps(py::module_& m);
void bindRuntime(py::module_& m);
void bindSched(py::module_& m);
void bindRepro(py::module_& m);
/// The scheduling methods of tensor values (split, merge, ...), added to the Value class.
void bindScheduleMethods(py::class_<Value>& value);
/// ParallelType, MemoryType, Axis, and the propagation, inlining and compile functions in
/// `sched`.
void bindSchedule(py::module_& m, py::module_& sched);
/// A device result as Python receives it (a DLPack producer).
py::object deviceResultOf(const DeviceTensor& tensor);

}  // namespace braze::python
