// braze.multidevice: device meshes for sharded definitions, spelled as nvFuser's direct
// frontend spells them (DeviceMesh, tv.set_device_mesh, tv.outer_split, ParallelType.mesh_x).

#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "braze/ir/device_mesh.h"

namespace braze::python {

void bindMultidevice(py::module_& m) {
  py::class_<DeviceMesh>(m, "DeviceMesh",
                         "The devices a sharded tensor is spread over: ids in a 1-D or 2-D grid")
      .def(py::init([](std::vector<int64_t> devices, std::optional<std::vector<int64_t>> shape) {
             if (!shape) return DeviceMesh(std::move(devices));
             return DeviceMesh(std::move(devices), std::move(*shape));
           }),
           py::arg("devices"), py::arg("shape") = py::none())
      .def_property_readonly("devices", &DeviceMesh::devices)
      .def_property_readonly("shape", &DeviceMesh::shape)
      .def_property_readonly("size", [](const DeviceMesh& mesh) { return mesh.size(); })
      .def("coordinates_of", &DeviceMesh::coordinatesOf, py::arg("device"))
      .def("__contains__", &DeviceMesh::has)
      .def("__len__", [](const DeviceMesh& mesh) { return mesh.size(); })
      .def("__repr__", &DeviceMesh::toString)
      .def(py::self == py::self);
}

}  // namespace braze::python
