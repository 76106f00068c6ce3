#include "support/shipped_registry.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace braze::test {

ShippedRegistry::ShippedRegistry(const std::string& schedulers) {
  static std::atomic<int> counter{0};
  scratch_ =
      std::filesystem::temp_directory_path() /
      ("braze-shipped-registry-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  RegistryOptions options;
  options.user_dir = scratch_ / "user";
  options.install_dir = scratch_ / "install";
  options.cache_file = scratch_ / "probe-cache.json";
  options.schedulers = schedulers;
  std::filesystem::create_directories(*options.user_dir);
  std::filesystem::create_directories(*options.install_dir);
  registry_ = std::make_unique<SchedulerRegistry>(options);
}

ShippedRegistry::~ShippedRegistry() {
  registry_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(scratch_, ignored);
}

const SchedulerRegistry& shippedSchedulers() {
  static const ShippedRegistry shipped;
  return shipped.registry();
}

}  // namespace braze::test
