#pragma once

// How the functions code generation writes into kernel templates (an epilogue, a row program)
// spell a fusion's values: tensor and scalar inputs are kernel parameters `e_<name>`, a
// tensor's value at the current element is a local `v_<name>` in its compute type, and scalars
// are written inline from constants, scalar inputs and (for a row program) the extents of
// input tensors, which the kernel reads from its tensor parameters ("e_T0.size[1]").

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "braze/ir/fusion.h"
#include "codegen/op_printer.h"

namespace braze::codegen {

/// Extent scalars the generated code reads from tensor parameters, and how it spells them.
using ExtentTexts = std::unordered_map<const Val*, std::string>;

std::string templateParameterName(const Val& val);
std::string templateLocalName(const Val& val);

/// Why `scalar` cannot be written inline (it is neither a constant, a scalar input, one of
/// `extents` nor an elementwise op of those), or nullopt; scalar inputs it reads are added to
/// `scalar_inputs` once each.
std::optional<std::string> templateScalarProblem(const Fusion& fusion, const Scalar& scalar,
                                                 const ExtentTexts& extents,
                                                 std::vector<const Scalar*>& scalar_inputs);

/// `scalar` as text (templateScalarProblem must have accepted it).
Rendered renderTemplateScalar(const Fusion& fusion, const Scalar& scalar,
                              const ExtentTexts& extents);

/// The value of `expr`'s output (an elementwise op, a cast, or a broadcast, expand or set,
/// which pass their input on) from its inputs' locals, in the output's compute dtype. Casts
/// round to their dtype.
std::string templateExprValue(const Fusion& fusion, const Expr& expr, const ExtentTexts& extents);

}  // namespace braze::codegen
