// Manual schedules from Python with nvFuser's spelling: tv.split / merge / reorder /
// axis(i).parallelize / rfactor / cache_after / cache_before / set_memory_type, the propagation
// and inlining passes, and compiling the scheduled fusion into one kernel.

#include <pybind11/stl.h>

#include "bindings.h"
#include "braze/codegen/codegen.h"
#include "braze/error.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/sched/inlining.h"
#include "braze/sched/parallel_propagation.h"
#include "braze/sched/schedule_printer.h"
#include "braze/sched/transform_propagation.h"

namespace braze::python {

namespace {

/// One loop axis of a tensor, as `tv.axis(i)` gives it.
struct Axis {
  Value tensor;
  int64_t position = 0;
};

std::vector<TensorView*> tensorsOf(const std::vector<Value>& values, std::string_view what) {
  std::vector<TensorView*> tensors;
  for (const Value& value : values) tensors.push_back(value.tensor(what, "selected"));
  return tensors;
}

}  // namespace

void bindScheduleMethods(py::class_<Value>& value) {
  // Scheduling methods of tensor values; each returns the tensor it changed (or made).
  value
      .def(
          "split",
          [](const Value& v, int64_t axis, int64_t factor, bool inner_split) {
            v.tensor("split", "the value")->split(axis, factor, inner_split);
            return v;
          },
          py::arg("axis"), py::arg("factor"), py::arg("inner_split") = true)
      .def(
          "outer_split",
          [](const Value& v, int64_t axis, int64_t parts) {
            v.tensor("outer_split", "the value")->split(axis, parts, /*inner_split=*/false);
            return v;
          },
          py::arg("axis"), py::arg("parts"))
      .def(
          "set_device_mesh",
          [](const Value& v, const DeviceMesh& mesh) {
            v.tensor("set_device_mesh", "the value")->setDeviceMesh(mesh);
            return v;
          },
          py::arg("mesh"))
      .def(
          "merge",
          [](const Value& v, int64_t outer, std::optional<int64_t> inner) {
            v.tensor("merge", "the value")->merge(outer, inner.value_or(outer + 1));
            return v;
          },
          py::arg("outer"), py::arg("inner") = py::none())
      .def(
          "reorder",
          [](const Value& v, const std::map<int64_t, int64_t>& old_to_new) {
            v.tensor("reorder", "the value")
                ->reorder(
                    std::vector<std::pair<int64_t, int64_t>>(old_to_new.begin(), old_to_new.end()));
            return v;
          },
          py::arg("old_to_new"))
      .def("axis",
           [](const Value& v, int64_t position) {
             return Axis{v, position};
           })
      .def("num_loop_axes",
           [](const Value& v) {
             return static_cast<int64_t>(v.tensor("num_loop_axes", "the value")->loop().size());
           })
      .def("rfactor",
           [](const Value& v, std::vector<int64_t> axes) {
             return wrap(v.fusion, v.tensor("rfactor", "the value")->rFactor(axes));
           })
      .def("cache_after",
           [](const Value& v) {
             return wrap(v.fusion, v.tensor("cache_after", "the value")->cacheAfter());
           })
      .def("cache_before",
           [](const Value& v) {
             return wrap(v.fusion, v.tensor("cache_before", "the value")->cacheBefore());
           })
      .def("set_memory_type", [](const Value& v, MemoryType type) {
        v.tensor("set_memory_type", "the value")->setMemoryType(type);
        return v;
      });
}

void bindSchedule(py::module_& m, py::module_& sched) {
  py::enum_<ParallelType>(m, "ParallelType")
      .value("Serial", ParallelType::Serial)
      .value("BIDx", ParallelType::BIDx)
      .value("BIDy", ParallelType::BIDy)
      .value("BIDz", ParallelType::BIDz)
      .value("TIDx", ParallelType::TIDx)
      .value("TIDy", ParallelType::TIDy)
      .value("TIDz", ParallelType::TIDz)
      .value("Vectorize", ParallelType::Vectorize)
      .value("Unroll", ParallelType::Unroll)
      .value("Unswitch", ParallelType::Unswitch)
      .value("Stream", ParallelType::Stream)
      .value("DIDx", ParallelType::DIDx)
      .value("DIDy", ParallelType::DIDy)
      // nvFuser's direct frontend spells the device dims mesh_x and mesh_y.
      .value("mesh_x", ParallelType::DIDx)
      .value("mesh_y", ParallelType::DIDy);
  py::enum_<MemoryType>(m, "MemoryType")
      .value("Global", MemoryType::Global)
      .value("Shared", MemoryType::Shared)
      .value("Local", MemoryType::Local);

  py::class_<Axis>(m, "Axis", "A loop axis of a tensor (tv.axis(i))")
      .def(
          "parallelize",
          [](const Axis& axis, ParallelType type) {
            axis.tensor.tensor("parallelize", "the axis' tensor")->parallelize(axis.position, type);
          })
      .def("extent", [](const Axis& axis) {
        TensorView* tv = axis.tensor.tensor("extent", "the axis' tensor");
        return wrap(axis.tensor.fusion, tv->loopAxis(axis.position)->extent());
      });

  sched.def(
      "transform_like",
      [](const Value& reference, const std::vector<Value>& selected) {
        TensorView* ref = reference.tensor("transform_like", "reference");
        if (selected.empty()) {
          propagateTransforms(ref);
        } else {
          propagateTransforms(ref, tensorsOf(selected, "transform_like"));
        }
      },
      py::arg("reference"), py::arg("selected") = std::vector<Value>{},
      "Replays the reference's loop transforms on the selected tensors (default: all)");
  sched.def(
      "parallelize_like",
      [](const Value& reference, const std::vector<Value>& selected) {
        TensorView* ref = reference.tensor("parallelize_like", "reference");
        if (selected.empty()) {
          propagateParallelTypes(ref);
        } else {
          propagateParallelTypes(ref, tensorsOf(selected, "parallelize_like"));
        }
      },
      py::arg("reference"), py::arg("selected") = std::vector<Value>{});
  sched.def(
      "inline_most",
      [](const std::shared_ptr<Fusion>& fusion, const std::vector<Value>& selected) {
        if (selected.empty()) {
          inlineMost(*fusion);
        } else {
          inlineMost(tensorsOf(selected, "inline_most"));
        }
      },
      py::arg("fusion"), py::arg("selected") = std::vector<Value>{});
  sched.def(
      "inline_at",
      [](const Value& tensor, int64_t position) {
        inlineAt(tensor.tensor("inline_at", "the tensor"), position);
      },
      py::arg("tensor"), py::arg("position"));
  sched.def(
      "print_schedule", [](const Fusion& fusion) { return printSchedule(fusion); },
      py::arg("fusion"));
  sched.def(
      "compile",
      [](const Fusion& fusion, const std::string& arch) {
        CompileOptions options;
        options.arch = driver::GpuArch::parse(arch);
        BRAZE_USER_CHECK(options.arch.has_value())
            << "compile: '" << arch << "' is not an architecture (sm_90, sm_100)";
        GeneratedKernel generated = generateCuda(fusion);
        CompiledKernel compiled =
            CompiledKernel::compile(generated.source, generated.kernel_name, options);
        py::dict d;
        d["kernel_name"] = compiled.kernelName();
        d["source"] = compiled.source();
        d["registers"] = compiled.resources().registers;
        d["cubin_bytes"] = compiled.cubin().size();
        return d;
      },
      py::arg("fusion"), py::arg("arch") = "sm_90",
      "Generates and compiles the manually scheduled fusion as one kernel (no GPU needed)");
  sched.def(
      "run",
      [](const std::shared_ptr<Fusion>& fusion, const py::handle& inputs) {
        // One kernel from the fusion as scheduled; device tensors only (it launches).
        GeneratedKernel generated = generateCuda(*fusion);
        CompiledKernel compiled = CompiledKernel::compile(generated.source, generated.kernel_name);
        KernelExecutor executor(*fusion, std::move(generated), std::move(compiled));
        RunArguments run = runArgumentsOf(inputs);
        std::vector<ExecutorArgument> arguments;
        for (const FusionArgument& argument : run.arguments) {
          if (const auto* device = std::get_if<DeviceTensor>(&argument)) {
            arguments.emplace_back(*device);
          } else if (const auto* scalar = std::get_if<ScalarValue>(&argument)) {
            arguments.emplace_back(*scalar);
          } else {
            BRAZE_THROW() << "manual_execute: launching needs CUDA tensors; on a machine "
                             "without a GPU, use fd.manual_compile() and fd.evaluate()";
          }
        }
        std::vector<DeviceTensor> outputs = executor.run(arguments);
        return resultsOf({outputs.begin(), outputs.end()}, run.torch);
      },
      py::arg("fusion"), py::arg("inputs"));
}

}  // namespace braze::python
