#pragma once

// GPU runs of a FusionExecutorCache checked against the reference evaluator.

#include <cuda.h>

#include <vector>

#include "braze/runtime/fusion_executor_cache.h"
#include "support/tensor_compare.h"

namespace braze::test {

/// Leaves `bytes` of 0xFF in `stream`'s pool, so that an allocation the run makes next and
/// never writes reads as NaN.
void poisonPool(size_t bytes, CUstream stream = nullptr);

/// Runs `cache` on device copies of `inputs` on `options.stream` after poisoning that stream's
/// pool, and expects every output within `tolerance` of the reference evaluator's. Inputs and
/// outputs are dropped before returning (the caller may then destroy the stream).
void expectCacheMatchesReference(FusionExecutorCache& cache, const std::vector<HostTensor>& inputs,
                                 const RunOptions& options = {},
                                 Tolerance (*tolerance)(DataType) = toleranceFor);

}  // namespace braze::test
