#pragma once

// The shipped scheduler plugins as a user process finds them (the build tree, or
// BRAZE_PLUGIN_PATH and BRAZE_PLUGIN_SCANNER where the tests run from a bundle), without the
// user's or install folders or the user's probe cache: one registry per test process.

#include "braze/plugin/scheduler_registry.h"

namespace braze::test {

const SchedulerRegistry& shippedSchedulers();

}  // namespace braze::test
