#pragma once

#include <ostream>
#include <string>

namespace braze {

class Expr;
class Fusion;
class Val;

/// The fusion's math as deterministic text: a header with inputs (and their layouts when not
/// row-major contiguous) and outputs, then one line per Expr in topological order. Scalar
/// expressions that compute extents are printed just before the first tensor that needs them.
/// Two fusions built the same way print the same text, so the output is golden-testable.
///
///   fusion(T0: float32[i0{s0}, i1{s1}], T1: float32[i2{s1}]) -> (T3)
///     T2: float32[b3{1}, i4{s1}] = broadcast(T1, flags=[true, false])
///     T3: float32[i5{s0}, i6{s1}] = add(T0, T2)
std::string printMath(const Fusion& fusion);
void printMath(std::ostream& os, const Fusion& fusion);

/// "T2: float32[b3{1}, i4{s1}]" for a tensor, "s3: index" for a scalar.
std::string describe(const Val* val);
/// "T3: float32[i5{s0}, r6{s1}] = sum(T2, axes=[1])": an Expr's line of printMath.
std::string describe(const Expr* expr);

}  // namespace braze
