#pragma once

#include "braze/ir/fusion.h"

namespace braze {

/// Rewrites every floating-point `a / broadcast(s)` of `fusion` into `a * broadcast(1 / s)`:
/// the reciprocal is computed once per element of `s` (once per row for softmax's row sum)
/// instead of a division per element of `a`; and every `a / n` by a scalar (a mean's row
/// length) into `a * (1 / n)`, whose reciprocal the kernel computes once, outside its loops.
/// An IEEE division costs about ten instructions and a branch; on a bf16 softmax the divisions
/// alone made the kernel issue-bound, and layer norm backward divided twice per row. The
/// product differs from the quotient by at most one ulp of the result's dtype (float32:
/// ~1.2e-7 relative), which is within every tolerance of the reference comparison and below
/// the error of the approximate division torch.compile's kernels use. Returns how many
/// divisions it rewrote. Only divisions whose tensor operands and result share one floating
/// dtype are rewritten; a scalar divisor of another dtype is converted to it first.
int multiplyByBroadcastReciprocals(Fusion& fusion);

}  // namespace braze
