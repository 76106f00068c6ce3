#pragma once

// The scheduled suite's scans (cumsum, cumprod, cummax, cummin), scheduled as the scan plugin
// does: the scan dim whole, innermost and serial, the other dims merged onto blocks and
// threads, everything inlined into the scan loop.

#include <vector>

#include "support/scheduled_suite.h"

namespace braze::test {

/// The scan cases, in a fixed order; scheduledSuite() includes them.
std::vector<ScheduledCase> scanCases();

}  // namespace braze::test
