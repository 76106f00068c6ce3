#pragma once

// Which exponentials code generation may compute as 2^(x log2 e) (braze::expNarrow: five
// instructions on sm_90, expf's eight) rather than with expf. The shorter form's relative
// error is at most about |x| 2^-24 + 2 ulp of float: 5e-6 at |x| = 88, where expf's is 1 ulp.
// Both are far below the rounding of a 16-bit output (bf16: 2^-9 relative; fp16: 2^-12), so the
// shorter form is taken where every output the exponential reaches is rounded to 16 bits or
// fewer, through operations that keep a relative error relative:
//   - products, quotients, reciprocals, maxima and minima, copies, broadcasts, casts to float;
//   - sums and additions only of values known to be positive (exp, and what products, sums and
//     reciprocals make of positive values), which cannot cancel;
//   - and finally a cast to, or an output of, float16, bfloat16 or float8.
// Anything else it meets (a subtraction, a comparison, a log, a float32 output) keeps expf. A
// bf16 softmax, issue-bound on its two exponentials per element, is the case that pays.

#include "braze/ir/fusion.h"

namespace braze::codegen {

/// True when `exp` (an OpKind::Exp computed in float32) may use braze::expNarrow.
bool expReachesOnlyNarrowOutputs(const Expr& exp);

}  // namespace braze::codegen
