#pragma once

/// Marks what the scan library exports; everything else is hidden, so that two plugins loaded
/// side by side never resolve each other's symbols.
#define BRAZE_SCAN_API __attribute__((visibility("default")))
