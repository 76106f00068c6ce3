#pragma once

/// Marks what the tma_ws_normalization library exports; everything else is hidden, so that two
/// plugins loaded side by side never resolve each other's symbols.
#define BRAZE_TMA_WS_NORMALIZATION_API __attribute__((visibility("default")))
