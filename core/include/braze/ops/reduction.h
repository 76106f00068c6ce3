#pragma once

#include <optional>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Reduction builders. `axes` index the input's user-visible dims (negative counts from the
/// end); duplicates and out-of-range axes are refused; an empty list reduces every dim. The
/// result keeps each reduced dim as a Reduction IterDomain; with keepdim the reduced dims
/// reappear as Broadcast dims of extent 1 (a broadcast op after the reduction), as PyTorch's
/// keepdim=True.
///
/// `dtype` is the result dtype, as PyTorch's `dtype=` argument; by default sum and prod give
/// int64 for integer and bool inputs and the input dtype otherwise. Reduced-precision floats
/// (float16, bfloat16) are accumulated in float32 and cast back: the fusion then holds
/// cast -> reduction -> cast.

TensorView* sum(TensorView* x, std::vector<int64_t> axes, bool keepdim = false,
                std::optional<DataType> dtype = std::nullopt);
TensorView* prod(TensorView* x, std::vector<int64_t> axes, bool keepdim = false,
                 std::optional<DataType> dtype = std::nullopt);
/// Largest / smallest value; nan propagates. `max` and `amax` are the same op.
TensorView* max(TensorView* x, std::vector<int64_t> axes, bool keepdim = false);
TensorView* min(TensorView* x, std::vector<int64_t> axes, bool keepdim = false);
TensorView* amax(TensorView* x, std::vector<int64_t> axes, bool keepdim = false);
TensorView* amin(TensorView* x, std::vector<int64_t> axes, bool keepdim = false);
/// sum / count, in a floating dtype (integer inputs are refused, as in PyTorch).
TensorView* mean(TensorView* x, std::vector<int64_t> axes, bool keepdim = false,
                 std::optional<DataType> dtype = std::nullopt);

/// The three running statistics of Welford's algorithm over `axes`: mean, sum of squared
/// deviations (m2) and the count n (Index dtype). Float inputs only; reduced precision is
/// computed in float32.
struct WelfordResult {
  TensorView* avg;
  TensorView* m2;
  TensorView* n;
};
WelfordResult welford(TensorView* x, std::vector<int64_t> axes);

/// Variance with Bessel's `correction` (1 = unbiased, as torch.var's default), through
/// Welford; result dtype is the input's.
TensorView* var(TensorView* x, std::vector<int64_t> axes, int64_t correction = 1,
                bool keepdim = false);
struct VarMeanResult {
  TensorView* var;
  TensorView* mean;
};
VarMeanResult var_mean(TensorView* x, std::vector<int64_t> axes, int64_t correction = 1,
                       bool keepdim = false);

}  // namespace braze
