#pragma once

/// Marks what the reduction library exports; everything else is hidden, so that two plugins
/// loaded side by side never resolve each other's symbols.
#define BRAZE_REDUCTION_API __attribute__((visibility("default")))
