// The `braze._braze` extension: pybind11 bindings of the core, one to one with the C++ API.
// The Python-facing classes (FusionDefinition, the ops namespace, DataType's nvFuser names)
// are in python/braze/*.py.

#include <pybind11/pybind11.h>

#include "bindings.h"
#include "braze/error.h"

PYBIND11_MODULE(_braze, m) {
  m.doc() = "Braze: a GPU fusion compiler (bindings of libbraze_core)";
  m.attr("__version__") = BRAZE_VERSION_STRING;
  // Every braze::Error reaches Python as braze.Error (a RuntimeError) with the C++ message.
  pybind11::register_exception<braze::Error>(m, "Error", PyExc_RuntimeError);
  braze::python::bindIr(m);
  pybind11::module_ ops = m.def_submodule("ops", "Op builders: one per op of the core");
  braze::python::bindOps(ops);
  braze::python::bindRuntime(m);
  pybind11::module_ sched = m.def_submodule("sched", "Schedulers by name");
  braze::python::bindSched(sched);
  braze::python::bindSchedule(m, sched);
  braze::python::bindRepro(m);
  braze::python::bindCache(m);
  pybind11::module_ multidevice =
      m.def_submodule("multidevice", "Device meshes for sharded definitions");
  braze::python::bindMultidevice(multidevice);
}
