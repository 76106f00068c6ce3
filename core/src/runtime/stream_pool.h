#pragma once

// The streams stream loops run their iterations on, and the events that order them: shared by
// single-device plans (execution_plan.cpp) and the multi-device runner.

#include <cuda.h>

#include <cstddef>
#include <vector>

namespace braze::runtime_detail {

/// The first `count` pool streams of `device` (non-blocking), made once per process and never
/// destroyed: a plan may be replayed until the process ends.
const std::vector<CUstream>& poolStreams(int device, int32_t count);

/// The first `count` high-priority streams of `device` (non-blocking, the context's greatest
/// priority), made once per process: where a stream loop's communication runs, so that its
/// kernels get SMs as soon as any free up instead of after every CTA of a GEMM launched
/// earlier.
const std::vector<CUstream>& priorityStreams(int device, int32_t count);

/// Event `index` of this thread on `device`, made on first use and kept. Recording an event
/// again is safe once a wait has been enqueued on it: the wait keeps the work recorded at the
/// time it was enqueued.
CUevent threadEvent(int device, size_t index);

}  // namespace braze::runtime_detail
