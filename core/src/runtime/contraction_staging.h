#pragma once

// Contraction operands that no scheduler takes as a run lays them out, copied first into a
// layout every tensor-core kernel reads. Internal to core/src/runtime.
//
// Tensor-core kernels copy their operands in rows: bulk tensor copies and 16-byte vector loads
// need every stride but the innermost to be a multiple of 16 bytes and the data to start on a
// 16-byte boundary. A bf16 x of [M, 1001] breaks the first, a column of a larger tensor the
// second. When no installed scheduler takes such a contraction, the executor cache runs a copy
// of the fusion in which the operand is first copied K-innermost, its K padded with zeros to a
// multiple of 16 bytes (both operands then, so that their K agrees; zeros add nothing to the
// products):
//
//   T2 = linear(T0: bf16[s0, s1], T1: bf16[s2, s1])      with s1 = 1001
//   becomes
//   s3 = ceil_div(s1, 8) * 8 - s1
//   T3 = pad(T0, 0, 0, 0, s3)             T4 = stride_order(T3, [1, 0])
//   T5 = pad(T1, 0, 0, 0, s3')            T6 = stride_order(T5, [1, 0])
//   T2 = linear(T4, T6)
//
// The copies are pointwise kernels of their own (the segmenter never forwards an operand of a
// contraction into its kernel), and cost one read and one write of the operand: little beside
// the 2 x M x N x K flops of a contraction worth running on tensor cores.

#include <memory>
#include <optional>
#include <string>

#include "braze/ir/fusion.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/fusion_kernel_runtime.h"

namespace braze::runtime_detail {

struct StagedContractions {
  /// Which operands are copied, as text ("linear T2: a, b padded"): tells apart the copies of a
  /// fusion made for different runs.
  std::string key;
  /// A copy of the fusion with those copies added; same inputs and outputs in the same order.
  std::unique_ptr<Fusion> fusion;
};

/// The copy of `fusion` with the staged operands of every contraction that no scheduler in
/// `registry` takes for `context`'s arguments but takes with its operands copied; nullopt when
/// there is none (the fusion runs as it is, and a refusal stays the original one).
std::optional<StagedContractions> stageContractionOperands(const Fusion& fusion,
                                                           const RunContext& context,
                                                           const SchedulerRegistry& registry);

/// `context` for a copy of its fusion (same inputs in the same order): the same arguments, with
/// the copy's extents bound.
RunContext contextForCopy(const RunContext& context, const Fusion& copy);

}  // namespace braze::runtime_detail
