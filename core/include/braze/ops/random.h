#pragma once

#include <optional>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ops/operand.h"

namespace braze {

/// Counter-based random tensors, as nvFuser's uniform and normal. Element k of the output (k
/// its row-major linear index in the output's logical shape) is a pure function of
/// (rng_seed, rng_offset, k): the counter {k, rng_offset} and the key rng_seed go through one
/// Philox-4x32-10 block, and the reference evaluator and generated kernels compute the same
/// formula, so a fusion gives the same values on the CPU and on any GPU schedule.
///
/// - rng_seed and rng_offset are integer scalars (constants or fusion inputs), given together
///   or not at all. Absent, both are 0: the tensor is still reproducible, but every call of the
///   fusion gives the same values. To draw fresh values, make them fusion inputs and advance the
///   offset between calls (by anything: different offsets give unrelated streams).
/// - dtype is floating (float32, float64, float16, bfloat16 or a float8). float64 uses 53
///   random bits and double arithmetic; the others compute in float32 and round once to the
///   dtype.
/// - uniform(minval, maxval): minval + u * (maxval - minval), u = (word >> 8) * 2^-24, with one
///   fused multiply-add; a result that rounds up to maxval becomes the float below it, so values
///   lie in [minval, maxval) when minval < maxval (in float32; a narrower dtype may round up
///   to maxval). Constant bounds with minval > maxval are refused.
/// - normal(mean, std): mean + std * sqrt(-2 log u1) * cos(2 pi u2) (Box-Muller, first
///   output), u1 in (0, 1] and u2 in [0, 1) from two Philox words. The GPU's log and cos may
///   differ from the CPU's by an ulp, so GPU results match the reference within a relative
///   1e-5 (float32), not bit for bit. A negative constant std is refused.
TensorView* uniform(Fusion& fusion, const std::vector<Operand>& shape, Operand minval,
                    Operand maxval, DataType dtype = DataType::Float32,
                    std::optional<Operand> rng_seed = std::nullopt,
                    std::optional<Operand> rng_offset = std::nullopt);
TensorView* normal(Fusion& fusion, const std::vector<Operand>& shape, Operand mean, Operand std,
                   DataType dtype = DataType::Float32,
                   std::optional<Operand> rng_seed = std::nullopt,
                   std::optional<Operand> rng_offset = std::nullopt);

}  // namespace braze
