// braze._braze.ops: one function per op builder of the core (braze/ops/*.h). Tensors and
// scalars of a fusion and Python numbers are accepted wherever the C++ builder takes an
// Operand; errors are the builders' own (braze.Error, naming the op and the argument).

#include <pybind11/stl.h>

#include "bindings.h"
#include "braze/error.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/random.h"
#include "braze/ops/reduction.h"
#include "braze/ops/scan.h"
#include "braze/ops/shape.h"

namespace braze::python {

namespace {

/// The fusion of the first fusion value among `objects` (the result's fusion).
std::shared_ptr<Fusion> fusionAmong(std::initializer_list<py::handle> objects,
                                    std::string_view op) {
  for (const py::handle& object : objects) {
    if (py::isinstance<Value>(object)) return object.cast<const Value&>().fusion;
  }
  BRAZE_THROW() << op
                << ": no argument is a value of a fusion; give at least one tensor or "
                   "scalar of the fusion (Python numbers alone have no fusion)";
}

/// `dims` as a list: an int or a sequence of ints.
std::vector<int64_t> dimList(const py::object& dims) {
  if (dims.is_none()) return {};
  if (py::isinstance<py::int_>(dims)) return {dims.cast<int64_t>()};
  return dims.cast<std::vector<int64_t>>();
}

/// A shape: Python ints and scalars of the fusion.
std::vector<Operand> shapeOf(const py::sequence& shape, std::string_view op) {
  std::vector<Operand> sizes;
  for (size_t i = 0; i < shape.size(); ++i)
    sizes.push_back(toOperand(shape[i], op, "size " + std::to_string(i)));
  return sizes;
}

template <Val* (*Builder)(Operand)>
void unary(py::module_& m, const char* name) {
  m.def(name, [name](const py::object& x) {
    return wrap(fusionAmong({x}, name), Builder(toOperand(x, name, "x")));
  });
}

template <Val* (*Builder)(Operand, Operand)>
void binary(py::module_& m, const char* name) {
  m.def(name, [name](const py::object& a, const py::object& b) {
    return wrap(fusionAmong({a, b}, name),
                Builder(toOperand(a, name, "a"), toOperand(b, name, "b")));
  });
}

template <TensorView* (*Builder)(TensorView*, std::vector<int64_t>, bool, std::optional<DataType>)>
void typedReduction(py::module_& m, const char* name) {
  m.def(
      name,
      [name](const py::object& x, const py::object& dims, bool keepdim,
             std::optional<DataType> dtype) {
        return wrap(fusionAmong({x}, name),
                    Builder(toTensor(x, name, "x"), dimList(dims), keepdim, dtype));
      },
      py::arg("arg"), py::arg("dims") = py::none(), py::arg("keepdim") = false,
      py::arg("dtype") = py::none());
}

template <TensorView* (*Builder)(TensorView*, std::vector<int64_t>, bool)>
void reduction(py::module_& m, const char* name) {
  m.def(
      name,
      [name](const py::object& x, const py::object& dims, bool keepdim,
             std::optional<DataType> dtype) {
        BRAZE_USER_CHECK(!dtype.has_value())
            << name << ": a dtype cannot be given (the result has the input's dtype); cast "
            << "the input or the result instead";
        return wrap(fusionAmong({x}, name),
                    Builder(toTensor(x, name, "x"), dimList(dims), keepdim));
      },
      py::arg("arg"), py::arg("dims") = py::none(), py::arg("keepdim") = false,
      py::arg("dtype") = py::none());
}

void bindElementwise(py::module_& m) {
#define BRAZE_BIND_UNARY(name) unary<static_cast<Val* (*)(Operand)>(&braze::name)>(m, #name);
  BRAZE_BIND_UNARY(neg)
  BRAZE_BIND_UNARY(abs)
  BRAZE_BIND_UNARY(exp)
  BRAZE_BIND_UNARY(exp2)
  BRAZE_BIND_UNARY(expm1)
  BRAZE_BIND_UNARY(log)
  BRAZE_BIND_UNARY(log2)
  BRAZE_BIND_UNARY(log1p)
  BRAZE_BIND_UNARY(sqrt)
  BRAZE_BIND_UNARY(rsqrt)
  BRAZE_BIND_UNARY(reciprocal)
  BRAZE_BIND_UNARY(sin)
  BRAZE_BIND_UNARY(cos)
  BRAZE_BIND_UNARY(tan)
  BRAZE_BIND_UNARY(tanh)
  BRAZE_BIND_UNARY(sigmoid)
  BRAZE_BIND_UNARY(relu)
  BRAZE_BIND_UNARY(silu)
  BRAZE_BIND_UNARY(erf)
  BRAZE_BIND_UNARY(erfc)
  BRAZE_BIND_UNARY(floor)
  BRAZE_BIND_UNARY(ceil)
  BRAZE_BIND_UNARY(round)
  BRAZE_BIND_UNARY(trunc)
  BRAZE_BIND_UNARY(sign)
  BRAZE_BIND_UNARY(isnan)
  BRAZE_BIND_UNARY(isinf)
  BRAZE_BIND_UNARY(isfinite)
  BRAZE_BIND_UNARY(signbit)
  BRAZE_BIND_UNARY(logical_not)
  BRAZE_BIND_UNARY(bitwise_not)
#undef BRAZE_BIND_UNARY

#define BRAZE_BIND_BINARY(name) \
  binary<static_cast<Val* (*)(Operand, Operand)>(&braze::name)>(m, #name);
  BRAZE_BIND_BINARY(add)
  BRAZE_BIND_BINARY(sub)
  BRAZE_BIND_BINARY(mul)
  BRAZE_BIND_BINARY(div)
  BRAZE_BIND_BINARY(truediv)
  BRAZE_BIND_BINARY(remainder)
  BRAZE_BIND_BINARY(fmod)
  BRAZE_BIND_BINARY(ceil_div)
  BRAZE_BIND_BINARY(pow)
  BRAZE_BIND_BINARY(maximum)
  BRAZE_BIND_BINARY(minimum)
  BRAZE_BIND_BINARY(atan2)
  BRAZE_BIND_BINARY(gcd)
  BRAZE_BIND_BINARY(nextafter)
  BRAZE_BIND_BINARY(eq)
  BRAZE_BIND_BINARY(ne)
  BRAZE_BIND_BINARY(lt)
  BRAZE_BIND_BINARY(le)
  BRAZE_BIND_BINARY(gt)
  BRAZE_BIND_BINARY(ge)
  BRAZE_BIND_BINARY(logical_and)
  BRAZE_BIND_BINARY(logical_or)
  BRAZE_BIND_BINARY(logical_xor)
  BRAZE_BIND_BINARY(bitwise_and)
  BRAZE_BIND_BINARY(bitwise_or)
  BRAZE_BIND_BINARY(bitwise_xor)
  BRAZE_BIND_BINARY(left_shift)
  BRAZE_BIND_BINARY(right_shift)
  BRAZE_BIND_BINARY(logical_right_shift)
#undef BRAZE_BIND_BINARY

  m.def(
      "gelu",
      [](const py::object& x, const std::string& approximate) {
        BRAZE_USER_CHECK(approximate == "none" || approximate == "tanh")
            << "gelu: approximate is \"none\" or \"tanh\", not \"" << approximate << "\"";
        return wrap(
            fusionAmong({x}, "gelu"),
            braze::gelu(toOperand(x, "gelu", "x"),
                        approximate == "tanh" ? GeluApproximation::Tanh : GeluApproximation::None));
      },
      py::arg("arg"), py::arg("approximate") = "none");
  m.def(
      "cast",
      [](const py::object& x, DataType dtype) {
        return wrap(fusionAmong({x}, "cast"), braze::cast(toOperand(x, "cast", "x"), dtype));
      },
      py::arg("arg"), py::arg("dtype"));
  m.def("where", [](const py::object& c, const py::object& a, const py::object& b) {
    return wrap(fusionAmong({c, a, b}, "where"),
                braze::where(toOperand(c, "where", "cond"), toOperand(a, "where", "a"),
                             toOperand(b, "where", "b")));
  });
  m.def("clamp", [](const py::object& x, const py::object& lo, const py::object& hi) {
    return wrap(fusionAmong({x, lo, hi}, "clamp"),
                braze::clamp(toOperand(x, "clamp", "x"), toOperand(lo, "clamp", "min"),
                             toOperand(hi, "clamp", "max")));
  });
  m.def("lerp", [](const py::object& s, const py::object& e, const py::object& w) {
    return wrap(fusionAmong({s, e, w}, "lerp"),
                braze::lerp(toOperand(s, "lerp", "start"), toOperand(e, "lerp", "end"),
                            toOperand(w, "lerp", "weight")));
  });
  m.def(
      "addcmul",
      [](const py::object& x, const py::object& t1, const py::object& t2, const py::object& value) {
        return wrap(
            fusionAmong({x, t1, t2, value}, "addcmul"),
            braze::addcmul(toOperand(x, "addcmul", "x"), toOperand(t1, "addcmul", "t1"),
                           toOperand(t2, "addcmul", "t2"), toOperand(value, "addcmul", "value")));
      },
      py::arg("arg"), py::arg("tensor1"), py::arg("tensor2"), py::arg("value") = 1.0);
}

void bindReductions(py::module_& m) {
  typedReduction<&braze::sum>(m, "sum");
  typedReduction<&braze::prod>(m, "prod");
  typedReduction<&braze::mean>(m, "mean");
  reduction<&braze::max>(m, "max");
  reduction<&braze::min>(m, "min");
  reduction<&braze::amax>(m, "amax");
  reduction<&braze::amin>(m, "amin");
  m.def(
      "var",
      [](const py::object& x, const py::object& dims, int64_t correction, bool keepdim) {
        return wrap(fusionAmong({x}, "var"),
                    braze::var(toTensor(x, "var", "x"), dimList(dims), correction, keepdim));
      },
      py::arg("arg"), py::arg("dims") = py::none(), py::arg("correction") = 1,
      py::arg("keepdim") = false);
  m.def(
      "var_mean",
      [](const py::object& x, const py::object& dims, int64_t correction, bool keepdim) {
        const std::shared_ptr<Fusion> fusion = fusionAmong({x}, "var_mean");
        const VarMeanResult result =
            braze::var_mean(toTensor(x, "var_mean", "x"), dimList(dims), correction, keepdim);
        return py::make_tuple(wrap(fusion, result.var), wrap(fusion, result.mean));
      },
      py::arg("arg"), py::arg("dims") = py::none(), py::arg("correction") = 1,
      py::arg("keepdim") = false);
  m.def(
      "welford",
      [](const py::object& x, const py::object& dims) {
        const std::shared_ptr<Fusion> fusion = fusionAmong({x}, "welford");
        const WelfordResult result = braze::welford(toTensor(x, "welford", "x"), dimList(dims));
        return py::make_tuple(wrap(fusion, result.avg), wrap(fusion, result.m2),
                              wrap(fusion, result.n));
      },
      py::arg("arg"), py::arg("dims"));
}

template <TensorView* (*Builder)(TensorView*, int64_t, std::optional<DataType>)>
void typedScan(py::module_& m, const char* name) {
  m.def(
      name,
      [name](const py::object& x, int64_t dim, std::optional<DataType> dtype) {
        return wrap(fusionAmong({x}, name), Builder(toTensor(x, name, "arg"), dim, dtype));
      },
      py::arg("arg"), py::arg("dim"), py::arg("dtype") = py::none());
}

// cummax and cummin give the running values (cummax_with_indices adds PyTorch's indices).
template <TensorView* (*Builder)(TensorView*, int64_t)>
void selectingScan(py::module_& m, const char* name) {
  m.def(
      name,
      [name](const py::object& x, int64_t dim) {
        return wrap(fusionAmong({x}, name), Builder(toTensor(x, name, "arg"), dim));
      },
      py::arg("arg"), py::arg("dim"));
}

// As torch.cummax / torch.cummin: (values, indices).
template <ScanWithIndices (*Builder)(TensorView*, int64_t)>
void scanWithIndices(py::module_& m, const char* name) {
  m.def(
      name,
      [name](const py::object& x, int64_t dim) {
        const std::shared_ptr<Fusion> fusion = fusionAmong({x}, name);
        const ScanWithIndices result = Builder(toTensor(x, name, "arg"), dim);
        return py::make_tuple(wrap(fusion, result.values), wrap(fusion, result.indices));
      },
      py::arg("arg"), py::arg("dim"));
}

void bindScans(py::module_& m) {
  typedScan<&braze::cumsum>(m, "cumsum");
  typedScan<&braze::cumprod>(m, "cumprod");
  selectingScan<&braze::cummax>(m, "cummax");
  selectingScan<&braze::cummin>(m, "cummin");
  scanWithIndices<&braze::cummaxWithIndices>(m, "cummax_with_indices");
  scanWithIndices<&braze::cumminWithIndices>(m, "cummin_with_indices");
}

void bindShapes(py::module_& m) {
  m.def(
      "broadcast_in_dim",
      [](const py::object& x, const py::sequence& shape, std::vector<int64_t> broadcast_dims) {
        return wrap(fusionAmong({x}, "broadcast_in_dim"),
                    braze::broadcast_in_dim(toTensor(x, "broadcast_in_dim", "arg"),
                                            shapeOf(shape, "broadcast_in_dim"), broadcast_dims));
      },
      py::arg("arg"), py::arg("shape"), py::arg("broadcast_dims"));
  m.def(
      "broadcast",
      [](const py::object& x, std::vector<bool> is_broadcast_dim) {
        return wrap(fusionAmong({x}, "broadcast"),
                    braze::broadcast(toTensor(x, "broadcast", "arg"), is_broadcast_dim));
      },
      py::arg("arg"), py::arg("is_broadcast_dim"));
  m.def(
      "expand",
      [](const py::object& x, const py::sequence& shape) {
        return wrap(fusionAmong({x}, "expand"),
                    braze::expand(toTensor(x, "expand", "arg"), shapeOf(shape, "expand")));
      },
      py::arg("arg"), py::arg("shape"));
  m.def(
      "reshape",
      [](const py::object& x, const py::sequence& shape) {
        return wrap(fusionAmong({x}, "reshape"),
                    braze::reshape(toTensor(x, "reshape", "arg"), shapeOf(shape, "reshape")));
      },
      py::arg("arg"), py::arg("new_shape"));
  m.def(
      "set",
      [](const py::object& x) {
        return wrap(fusionAmong({x}, "set"), braze::set(toTensor(x, "set", "arg")));
      },
      py::arg("arg"));
  m.def(
      "segment_set",
      [](const py::object& x) {
        return wrap(fusionAmong({x}, "segment_set"),
                    braze::segment_set(toTensor(x, "segment_set", "arg")));
      },
      py::arg("arg"));
  m.def(
      "stride_order",
      [](const py::object& x, std::vector<int64_t> stride_order) {
        return wrap(fusionAmong({x}, "stride_order"),
                    braze::stride_order(toTensor(x, "stride_order", "arg"), stride_order));
      },
      py::arg("arg"), py::arg("stride_order"));
  m.def(
      "triu",
      [](const py::object& x, int64_t diagonal) {
        return wrap(fusionAmong({x}, "triu"), braze::triu(toTensor(x, "triu", "arg"), diagonal));
      },
      py::arg("arg"), py::arg("diagonal") = 0);
  m.def(
      "permute",
      [](const py::object& x, std::vector<int64_t> dims) {
        return wrap(fusionAmong({x}, "permute"),
                    braze::permute(toTensor(x, "permute", "arg"), dims));
      },
      py::arg("arg"), py::arg("dims"));
  m.def(
      "transpose",
      [](const py::object& x, int64_t dim0, int64_t dim1) {
        return wrap(fusionAmong({x}, "transpose"),
                    braze::transpose(toTensor(x, "transpose", "arg"), dim0, dim1));
      },
      py::arg("arg"), py::arg("dim0"), py::arg("dim1"));
  m.def(
      "squeeze",
      [](const py::object& x, const py::object& dims) {
        return wrap(fusionAmong({x}, "squeeze"),
                    braze::squeeze(toTensor(x, "squeeze", "arg"), dimList(dims)));
      },
      py::arg("arg"), py::arg("dims"));
  m.def(
      "unsqueeze",
      [](const py::object& x, int64_t dim) {
        return wrap(fusionAmong({x}, "unsqueeze"),
                    braze::unsqueeze(toTensor(x, "unsqueeze", "arg"), dim));
      },
      py::arg("arg"), py::arg("dim"));
  m.def(
      "flatten",
      [](const py::object& x, int64_t start_dim, int64_t end_dim) {
        return wrap(fusionAmong({x}, "flatten"),
                    braze::flatten(toTensor(x, "flatten", "arg"), start_dim, end_dim));
      },
      py::arg("arg"), py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  m.def(
      "slice",
      [](const py::object& x, const py::sequence& starts, const py::sequence& ends,
         const py::object& strides, bool manual_normalization) {
        TensorView* tv = toTensor(x, "slice", "arg");
        BRAZE_USER_CHECK(starts.size() == ends.size())
            << "slice: " << starts.size() << " start indices but " << ends.size()
            << " end indices; give one of each per dim";
        std::vector<SliceRange> ranges;
        for (size_t d = 0; d < starts.size(); ++d) {
          SliceRange range;
          range.start = toOperand(starts[d], "slice", "start index " + std::to_string(d));
          range.stop = toOperand(ends[d], "slice", "end index " + std::to_string(d));
          if (!strides.is_none())
            range.step =
                toOperand(py::sequence(strides)[d], "slice", "stride " + std::to_string(d));
          ranges.push_back(range);
        }
        return wrap(fusionAmong({x}, "slice"), braze::slice(tv, ranges, manual_normalization));
      },
      py::arg("arg"), py::arg("start_indices"), py::arg("end_indices"),
      py::arg("strides") = py::none(), py::arg("manual_normalization") = false,
      "x[start:end:stride] per dim with Python semantics (negative indices count from the end, "
      "then clamp to the size); with manual_normalization the indices are already normalized "
      "(0 <= start <= end <= size) and used as given");
  m.def(
      "pad",
      [](const py::object& x, const py::sequence& widths, const py::object& value) {
        return wrap(fusionAmong({x}, "pad"),
                    braze::pad(toTensor(x, "pad", "arg"), shapeOf(widths, "pad"),
                               value.is_none() ? Operand(0.0) : toOperand(value, "pad", "value")));
      },
      py::arg("arg"), py::arg("pad_widths"), py::arg("value") = py::none());
  m.def(
      "cat",
      [](const py::sequence& tensors, int64_t dim) {
        std::vector<TensorView*> tvs;
        std::shared_ptr<Fusion> fusion;
        for (size_t i = 0; i < tensors.size(); ++i) {
          tvs.push_back(toTensor(tensors[i], "cat", "tensor " + std::to_string(i)));
          if (!fusion) fusion = tensors[i].cast<const Value&>().fusion;
        }
        BRAZE_USER_CHECK(fusion != nullptr) << "cat: no tensors given";
        return wrap(fusion, braze::cat(tvs, dim));
      },
      py::arg("tensors"), py::arg("dim") = 0);
  m.def(
      "select",
      [](const py::object& x, const py::object& index, int64_t dim) {
        return wrap(fusionAmong({x}, "select"), braze::select(toTensor(x, "select", "arg"), dim,
                                                              toOperand(index, "select", "index")));
      },
      py::arg("arg"), py::arg("index"), py::arg("dim"));
  m.def(
      "index_select",
      [](const py::object& x, const py::object& index, int64_t dim) {
        return wrap(fusionAmong({x}, "index_select"),
                    braze::index_select(toTensor(x, "index_select", "arg"), dim,
                                        toTensor(index, "index_select", "index")));
      },
      py::arg("arg"), py::arg("index"), py::arg("dim"));
  m.def(
      "take",
      [](const py::object& x, const py::object& index, int64_t dim) {
        return wrap(fusionAmong({x}, "take"),
                    braze::take(toTensor(x, "take", "arg"), dim, toTensor(index, "take", "index")));
      },
      py::arg("arg"), py::arg("index"), py::arg("dim"));
  m.def(
      "embedding_fwd",
      [](const py::object& input, const py::object& weight, const py::object& padding_idx,
         const py::object& max_norm, const py::object& norm_type,
         const py::object& scale_grad_by_freq, const py::object& sparse) {
        auto option = [](const py::object& value, std::string_view name) {
          return value.is_none() ? std::nullopt
                                 : std::optional<Operand>(toOperand(value, "embedding_fwd", name));
        };
        const EmbeddingOptions options{
            .padding_idx = option(padding_idx, "padding_idx"),
            .max_norm = option(max_norm, "max_norm"),
            .norm_type = option(norm_type, "norm_type"),
            .scale_grad_by_freq = option(scale_grad_by_freq, "scale_grad_by_freq"),
            .sparse = option(sparse, "sparse")};
        return wrap(fusionAmong({input, weight}, "embedding_fwd"),
                    braze::embedding_fwd(toTensor(input, "embedding_fwd", "input"),
                                         toTensor(weight, "embedding_fwd", "weight"), options));
      },
      py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none(),
      py::arg("max_norm") = py::none(), py::arg("norm_type") = py::none(),
      py::arg("scale_grad_by_freq") = py::none(), py::arg("sparse") = py::none());
  for (const char* name : {"gather", "take_along_axis"}) {
    m.def(
        name,
        [name](const py::object& x, const py::object& index, int64_t dim) {
          return wrap(fusionAmong({x}, name),
                      braze::gather(toTensor(x, name, "arg"), dim, toTensor(index, name, "index")));
        },
        py::arg("arg"), py::arg("index"), py::arg("dim"));
  }
  m.def(
      "scatter",
      [](const py::object& x, const py::object& index, const py::object& src, int64_t dim) {
        return wrap(fusionAmong({x}, "scatter"), braze::scatter(toTensor(x, "scatter", "arg"), dim,
                                                                toTensor(index, "scatter", "index"),
                                                                toTensor(src, "scatter", "src")));
      },
      py::arg("arg"), py::arg("index"), py::arg("src"), py::arg("dim"));
  m.def("matmul", [](const py::object& a, const py::object& b) {
    return wrap(fusionAmong({a}, "matmul"),
                braze::matmul(toTensor(a, "matmul", "a"), toTensor(b, "matmul", "b")));
  });
  m.def(
      "linear",
      [](const py::object& x, const py::object& weight, const py::object& bias) {
        return wrap(fusionAmong({x}, "linear"),
                    braze::linear(toTensor(x, "linear", "x"), toTensor(weight, "linear", "weight"),
                                  bias.is_none() ? nullptr : toTensor(bias, "linear", "bias")));
      },
      py::arg("arg"), py::arg("weight"), py::arg("bias") = py::none());
}

void bindFactories(py::module_& m) {
  // The fusion comes first: these make a tensor from nothing (the Python layer passes it).
  m.def(
      "full",
      [](const std::shared_ptr<Fusion>& fusion, const py::sequence& shape, const py::object& value,
         DataType dtype) {
        return wrap(fusion, braze::full(*fusion, shapeOf(shape, "full"),
                                        toOperand(value, "full", "fill_value"), dtype));
      },
      py::arg("fusion"), py::arg("shape"), py::arg("fill_value"), py::arg("dtype"));
  m.def(
      "iota",
      [](const std::shared_ptr<Fusion>& fusion, const py::object& length, const py::object& start,
         const py::object& step, DataType dtype) {
        return wrap(
            fusion,
            braze::iota(*fusion, toOperand(length, "iota", "length"),
                        start.is_none() ? Operand(int64_t{0}) : toOperand(start, "iota", "start"),
                        step.is_none() ? Operand(int64_t{1}) : toOperand(step, "iota", "step"),
                        dtype));
      },
      py::arg("fusion"), py::arg("length"), py::arg("start") = py::none(),
      py::arg("step") = py::none(), py::arg("dtype") = DataType::Int64);
  m.def(
      "arange",
      [](const std::shared_ptr<Fusion>& fusion, const py::object& start, const py::object& end,
         const py::object& step, DataType dtype) {
        return wrap(fusion, braze::arange(*fusion, toOperand(start, "arange", "start"),
                                          toOperand(end, "arange", "end"),
                                          toOperand(step, "arange", "step"), dtype));
      },
      py::arg("fusion"), py::arg("start"), py::arg("end"), py::arg("step") = 1,
      py::arg("dtype") = DataType::Int64);
}

// uniform and normal with nvFuser's spelling: two distribution parameters, the shape, then
// keyword-only rng_seed and rng_offset (both or neither; neither means seed 0, offset 0).
template <TensorView* (*Builder)(Fusion&, const std::vector<Operand>&, Operand, Operand, DataType,
                                 std::optional<Operand>, std::optional<Operand>)>
void bindRandom(py::module_& m, const char* name, const char* first, const char* second) {
  m.def(
      name,
      [name, first, second](const std::shared_ptr<Fusion>& fusion, const py::object& a,
                            const py::object& b, const py::sequence& shape,
                            const py::object& rng_seed, const py::object& rng_offset,
                            DataType dtype) {
        auto optional = [&](const py::object& value, const char* argument) {
          return value.is_none() ? std::nullopt
                                 : std::optional<Operand>(toOperand(value, name, argument));
        };
        return wrap(fusion,
                    Builder(*fusion, shapeOf(shape, name), toOperand(a, name, first),
                            toOperand(b, name, second), dtype, optional(rng_seed, "rng_seed"),
                            optional(rng_offset, "rng_offset")));
      },
      py::arg("fusion"), py::arg(first), py::arg(second), py::arg("shape"), py::kw_only(),
      py::arg("rng_seed") = py::none(), py::arg("rng_offset") = py::none(),
      py::arg("dtype") = DataType::Float32);
}

}  // namespace

void bindOps(py::module_& m) {
  bindElementwise(m);
  bindReductions(m);
  bindScans(m);
  bindShapes(m);
  bindFactories(m);
  bindRandom<braze::uniform>(m, "uniform", "minval", "maxval");
  bindRandom<braze::normal>(m, "normal", "mean", "std");
}

}  // namespace braze::python
