#pragma once

// Case tables describe each fusion by the body that defines it; this turns such a body into
// the builder the cases store.

#include <functional>
#include <memory>

#include "braze/ir/fusion.h"

namespace braze::test {

/// A builder that makes a fresh Fusion and runs `body(fusion)` on it, each call anew (a
/// scheduled fusion is changed in place, so every test takes its own).
template <typename Body>
std::function<std::unique_ptr<Fusion>()> fusionOf(Body body) {
  return [body] {
    auto fusion = std::make_unique<Fusion>();
    body(*fusion);
    return fusion;
  };
}

}  // namespace braze::test
