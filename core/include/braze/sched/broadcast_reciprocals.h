#pragma once

#include "braze/ir/fusion.h"

namespace braze {

/// Rewrites every floating-point `a / broadcast(s)` of `fusion` into `a * broadcast(1 / s)`:
/// the reciprocal is computed once per element of `s` (once per row for softmax's row sum)
/// instead of a division per element of `a`. An IEEE division costs about ten instructions;
/// on a bf16 softmax the divisions alone made the kernel issue-bound. The product differs from
/// the quotient by at most one ulp of the result's dtype (float32: ~1.2e-7 relative), which
/// is within every tolerance of the reference comparison and below the error of the
/// approximate division torch.compile's kernels use. Returns how many divisions it rewrote.
/// Only divisions whose operands and result share one floating dtype are rewritten.
int multiplyByBroadcastReciprocals(Fusion& fusion);

}  // namespace braze
