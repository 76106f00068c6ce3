#pragma once

// The schedulers shipped with Braze, as a user process finds them, for tests that segment or
// schedule through the registry.

#include <filesystem>
#include <memory>
#include <string>

#include "braze/plugin/scheduler_registry.h"

namespace braze::test {

/// A registry of the build tree's plugins (or BRAZE_PLUGIN_PATH's, where the tests run from a
/// bundle), without the user's or the install prefix's folders or probe cache: those point into
/// a scratch folder removed with this object.
class ShippedRegistry {
 public:
  /// `schedulers` as BRAZE_SCHEDULERS spells it ("-braze::tma_ws_normalization"): which to use.
  explicit ShippedRegistry(const std::string& schedulers = "");
  ~ShippedRegistry();
  ShippedRegistry(const ShippedRegistry&) = delete;
  ShippedRegistry& operator=(const ShippedRegistry&) = delete;

  const SchedulerRegistry& registry() const { return *registry_; }

 private:
  std::filesystem::path scratch_;
  std::unique_ptr<SchedulerRegistry> registry_;
};

/// One ShippedRegistry for the whole test process, made on first use.
const SchedulerRegistry& shippedSchedulers();

}  // namespace braze::test
