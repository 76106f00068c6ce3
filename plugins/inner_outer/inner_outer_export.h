#pragma once

/// Marks what the inner-outer library exports; everything else is hidden, so that two plugins
/// loaded side by side never resolve each other's symbols.
#define BRAZE_INNER_OUTER_API __attribute__((visibility("default")))
