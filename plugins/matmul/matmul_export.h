#pragma once

/// Marks what the matmul library exports; everything else is hidden, so that two plugins
/// loaded side by side never resolve each other's symbols.
#define BRAZE_MATMUL_API __attribute__((visibility("default")))
