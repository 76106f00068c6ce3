#include "codegen/template_values.h"

#include <algorithm>

#include "braze/ops/elementwise.h"

namespace braze::codegen {

std::string templateParameterName(const Val& val) {
  return "e_" + val.name();
}

std::string templateLocalName(const Val& val) {
  return "v_" + val.name();
}

std::optional<std::string> templateScalarProblem(const Fusion& fusion, const Scalar& scalar,
                                                 const ExtentTexts& extents,
                                                 std::vector<const Scalar*>& scalar_inputs) {
  if (scalar.isConstant() || extents.count(&scalar)) return std::nullopt;
  if (fusion.isInput(&scalar)) {
    if (std::find(scalar_inputs.begin(), scalar_inputs.end(), &scalar) == scalar_inputs.end())
      scalar_inputs.push_back(&scalar);
    return std::nullopt;
  }
  const Expr* def = scalar.definition();
  if (def == nullptr || !isElementwise(def->op()))
    return "the scalar " + scalar.name() + " is neither a constant, an input of the fusion" +
           (extents.empty() ? std::string(" nor") : std::string(", an input's extent nor")) +
           " an elementwise op of those";
  for (const Val* input : def->inputs()) {
    if (auto problem = templateScalarProblem(fusion, *input->as<Scalar>(), extents, scalar_inputs))
      return problem;
  }
  return std::nullopt;
}

Rendered renderTemplateScalar(const Fusion& fusion, const Scalar& scalar,
                              const ExtentTexts& extents) {
  Rendered r;
  r.dtype = scalar.dtype();
  if (scalar.isConstant()) {
    r.constant = *scalar.value();
    r.text = literal(*scalar.value(), scalar.dtype());
    return r;
  }
  if (const auto extent = extents.find(&scalar); extent != extents.end()) {
    r.text = extent->second;
    r.index_typed = true;
    r.atomic = false;
    return r;
  }
  if (fusion.isInput(&scalar)) {
    r.text = templateParameterName(scalar);
    r.index_typed = scalar.dtype() == DataType::Index;
    return r;
  }
  const Expr& def = *scalar.definition();
  std::vector<std::string> inputs;
  for (size_t i = 0; i < def.inputs().size(); ++i) {
    inputs.push_back(convert(renderTemplateScalar(fusion, *def.input(i)->as<Scalar>(), extents),
                             inputComputeDtype(def, i)));
  }
  r.text = elementwiseValue(def, inputs);
  r.dtype = computeDtype(scalar.dtype());
  return r;
}

std::string templateExprValue(const Fusion& fusion, const Expr& expr, const ExtentTexts& extents) {
  const auto render = [&](const Val* v) {
    if (const auto* scalar = v->dynCast<Scalar>())
      return renderTemplateScalar(fusion, *scalar, extents);
    Rendered local;
    local.text = templateLocalName(*v);
    local.dtype = computeDtype(v->dtype());
    return local;
  };
  const DataType out_dtype = expr.output(0)->dtype();
  const DataType out = computeDtype(out_dtype);
  if (expr.op() == OpKind::Cast) {
    // A cast rounds to its dtype, which may be narrower than the compute type it is held in.
    const std::string value = convert(render(expr.input(0)), out);
    const std::string storage = storageType(out_dtype);
    if (storage == computeType(out)) return value;
    return "(" + computeType(out) + ")(" + storage + ")(" + value + ")";
  }
  if (!isElementwise(expr.op())) return convert(render(expr.input(0)), out);
  std::vector<std::string> inputs;
  for (size_t i = 0; i < expr.inputs().size(); ++i) {
    inputs.push_back(convert(render(expr.input(i)), inputComputeDtype(expr, i)));
  }
  return elementwiseValue(expr, inputs);
}

}  // namespace braze::codegen
