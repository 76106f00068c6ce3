// The IR as Python sees it: dtypes, fusions and their values, inputs and outputs.

#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "braze/error.h"
#include "braze/ir/printer.h"
#include "braze/ir/scalar.h"
#include "braze/ir/structural_hash.h"

namespace braze::python {

TensorView* Value::tensor(std::string_view op, std::string_view argument) const {
  auto* tv = val->dynCast<TensorView>();
  BRAZE_USER_CHECK(tv != nullptr) << op << ": " << argument << " must be a tensor, but "
                                  << val->name() << " is a scalar";
  return tv;
}

Value wrap(const std::shared_ptr<Fusion>& fusion, Val* val) {
  return Value{fusion, val};
}

Operand toOperand(const py::handle& object, std::string_view op, std::string_view argument) {
  if (py::isinstance<Value>(object)) return Operand(object.cast<const Value&>().val);
  // bool before int: Python's True is an int too.
  if (py::isinstance<py::bool_>(object)) return Operand(object.cast<bool>());
  if (py::isinstance<py::int_>(object)) return Operand(object.cast<int64_t>());
  if (py::isinstance<py::float_>(object)) return Operand(object.cast<double>());
  throw py::type_error(std::string(op) + ": " + std::string(argument) +
                       " must be a value of the fusion (a tensor or scalar), a bool, an int or "
                       "a float, not " +
                       std::string(py::str(py::type::of(object).attr("__name__"))));
}

TensorView* toTensor(const py::handle& object, std::string_view op, std::string_view argument) {
  if (!py::isinstance<Value>(object)) {
    throw py::type_error(std::string(op) + ": " + std::string(argument) +
                         " must be a tensor of the fusion, not " +
                         std::string(py::str(py::type::of(object).attr("__name__"))));
  }
  return object.cast<const Value&>().tensor(op, argument);
}

namespace {

/// An Expr of a fusion, as Python holds it (the fusion kept alive with it).
struct ExprHandle {
  std::shared_ptr<Fusion> fusion;
  const Expr* expr = nullptr;
};

py::object attributeValue(const AttributeValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

std::vector<Value> wrapAll(const std::shared_ptr<Fusion>& fusion, const std::vector<Val*>& vals) {
  std::vector<Value> wrapped;
  for (Val* val : vals) wrapped.push_back(wrap(fusion, val));
  return wrapped;
}

}  // namespace

void bindIr(py::module_& m) {
  py::enum_<DataType>(m, "CoreDataType", "Braze's dtypes, as the C++ API names them")
      .value("Bool", DataType::Bool)
      .value("Int32", DataType::Int32)
      .value("Int64", DataType::Int64)
      .value("Float16", DataType::Float16)
      .value("BFloat16", DataType::BFloat16)
      .value("Float32", DataType::Float32)
      .value("Float64", DataType::Float64)
      .value("Index", DataType::Index)
      .value("Float8_e4m3fn", DataType::Float8_e4m3fn)
      .value("Float8_e5m2", DataType::Float8_e5m2);

  py::class_<Value> value(m, "Value", "A tensor or scalar of a fusion");
  bindScheduleMethods(value);
  value.def("is_tensor", &Value::isTensor)
      .def("is_scalar", [](const Value& v) { return !v.isTensor(); })
      .def_property_readonly("dtype", [](const Value& v) { return v.val->dtype(); })
      .def("ndim",
           [](const Value& v) { return v.isTensor() ? v.val->as<TensorView>()->rank() : 0; })
      .def(
          "size",
          [](const Value& v, int64_t dim) {
            TensorView* tv = v.tensor("size", "the value");
            const std::vector<IterDomain*> dims = tv->logicalNoReductions();
            const auto rank = static_cast<int64_t>(dims.size());
            BRAZE_USER_CHECK(dim >= -rank && dim < rank)
                << "size: dim " << dim << " is out of range for " << tv->name() << " of rank "
                << rank;
            return wrap(v.fusion,
                        dims[static_cast<size_t>(dim < 0 ? dim + rank : dim)]->logicalExtent());
          },
          py::arg("dim"), "The extent of dim `dim` as a scalar of the fusion")
      .def(
          "shape",
          [](const Value& v) {
            std::vector<Value> extents;
            for (IterDomain* id : v.tensor("shape", "the value")->logicalNoReductions())
              extents.push_back(wrap(v.fusion, id->logicalExtent()));
            return extents;
          },
          "The extents of the tensor's dims, as scalars of the fusion")
      .def(
          "contiguity",
          [](const Value& v) { return v.tensor("contiguity", "the value")->contiguity(); },
          "Per dim: whether its stride is dense (None for a broadcast dim); inputs carry their "
          "definition's, computed tensors all true")
      .def("constant_value",
           [](const Value& v) -> py::object {
             const auto* scalar = v.val->dynCast<Scalar>();
             if (scalar == nullptr || !scalar->isConstant()) return py::none();
             return std::visit([](auto x) -> py::object { return py::cast(x); }, *scalar->value());
           })
      .def_property_readonly("name", [](const Value& v) { return v.val->name(); })
      .def("__repr__", [](const Value& v) { return describe(v.val); })
      .def("definition",
           [](const Value& v) -> py::object {
             const Expr* definition = v.val->definition();
             if (definition == nullptr) return py::none();
             return py::cast(ExprHandle{v.fusion, definition});
           })
      .def("__eq__", [](const Value& a, const Value& b) { return a.val == b.val; })
      .def("__hash__", [](const Value& v) { return std::hash<const Val*>()(v.val); });

  py::class_<ExprHandle>(m, "Expr", "An op of a fusion: its name, inputs, outputs, attributes")
      .def_property_readonly(
          "op", [](const ExprHandle& e) { return std::string(toString(e.expr->op())); })
      .def("inputs", [](const ExprHandle& e) { return wrapAll(e.fusion, e.expr->inputs()); })
      .def("outputs", [](const ExprHandle& e) { return wrapAll(e.fusion, e.expr->outputs()); })
      .def("attributes",
           [](const ExprHandle& e) {
             py::dict d;
             for (const Attribute& a : e.expr->attributes())
               d[py::str(a.name)] = attributeValue(a.value);
             return d;
           })
      .def("__repr__", [](const ExprHandle& e) { return describe(e.expr); });

  py::class_<Fusion, std::shared_ptr<Fusion>>(m, "Fusion", "A fusion: its inputs, ops, outputs")
      .def(py::init([] { return std::make_shared<Fusion>(); }))
      .def(
          "define_tensor",
          [](const std::shared_ptr<Fusion>& fusion, std::vector<int64_t> sizes,
             std::vector<std::optional<bool>> contiguity, DataType dtype,
             std::vector<int64_t> allocation_order) {
            TensorSpec spec;
            spec.dtype = dtype;
            spec.sizes = std::move(sizes);
            spec.contiguity = std::move(contiguity);
            spec.allocation_order = std::move(allocation_order);
            return wrap(fusion, makeInputTensor(*fusion, spec));
          },
          py::arg("sizes"), py::arg("contiguity") = std::vector<std::optional<bool>>{},
          py::arg("dtype") = DataType::Float32,
          py::arg("allocation_order") = std::vector<int64_t>{},
          "A new input tensor: sizes (-1 symbolic, 1 broadcast), contiguity per dim, "
          "allocation order outermost first")
      .def(
          "define_scalar",
          [](const std::shared_ptr<Fusion>& fusion, DataType dtype, const py::object& value) {
            if (value.is_none()) return wrap(fusion, makeInputScalar(*fusion, dtype));
            const Operand constant = toOperand(value, "define_scalar", "value");
            return wrap(fusion, fusion->constant(constant.constant(), dtype));
          },
          py::arg("dtype"), py::arg("value") = py::none(),
          "A constant scalar, or (value None) a symbolic scalar input")
      .def("add_output",
           [](const std::shared_ptr<Fusion>& fusion, const Value& value) {
             BRAZE_USER_CHECK(value.fusion == fusion)
                 << "add_output: " << value.val->name() << " belongs to another fusion";
             fusion->addOutput(value.val);
           })
      .def(
          "alias_output_to_input",
          [](const std::shared_ptr<Fusion>& fusion, const Value& output, const Value& input) {
            BRAZE_USER_CHECK(output.fusion == fusion && input.fusion == fusion)
                << "alias_output_to_input: the values belong to another fusion";
            fusion->aliasOutputToInput(output.val, input.val);
          },
          py::arg("output"), py::arg("input"),
          "Writes output into input's memory on every run (Fusion::aliasOutputToInput)")
      .def("aliased_input",
           [](const std::shared_ptr<Fusion>& fusion, const Value& output) -> py::object {
             Val* input = fusion->aliasedInput(output.val);
             if (input == nullptr) return py::none();
             return py::cast(wrap(fusion, input));
           })
      .def("inputs", [](const std::shared_ptr<Fusion>& f) { return wrapAll(f, f->inputs()); })
      .def("outputs", [](const std::shared_ptr<Fusion>& f) { return wrapAll(f, f->outputs()); })
      .def("exprs",
           [](const std::shared_ptr<Fusion>& f) {
             std::vector<ExprHandle> exprs;
             for (const Expr* expr : f->exprs()) exprs.push_back({f, expr});
             return exprs;
           })
      .def("canonical_form", [](const Fusion& f) { return canonicalForm(f); })
      .def("structural_hash", [](const Fusion& f) { return structuralHash(f); })
      .def("clone", [](const Fusion& f) { return std::shared_ptr<Fusion>(f.clone()); })
      .def("__str__", [](const Fusion& f) { return printMath(f); });
}

}  // namespace braze::python
