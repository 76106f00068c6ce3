#pragma once

#include "braze/ir/fusion.h"

namespace braze {

/// torch.matmul's shape rules: 1-D x 1-D is a dot product (0-D result), 2-D x 2-D a matrix
/// product, a 1-D operand is promoted by a unit dim that is removed after, and leading batch
/// dims broadcast. Inner sizes must agree. Both operands must be floating with the same dtype;
/// the result has that dtype (accumulation is float32 or wider).
TensorView* matmul(TensorView* a, TensorView* b);

/// torch.nn.functional.linear: x [..., K], weight [N, K] (or [K]), optional bias [N] (or
/// scalar-shaped); result [..., N].
TensorView* linear(TensorView* x, TensorView* weight, TensorView* bias = nullptr);

}  // namespace braze
