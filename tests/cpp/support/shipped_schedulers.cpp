#include "support/shipped_schedulers.h"

#include <unistd.h>

#include <filesystem>
#include <string>

namespace braze::test {

const SchedulerRegistry& shippedSchedulers() {
  static const SchedulerRegistry registry = [] {
    const std::filesystem::path scratch =
        std::filesystem::temp_directory_path() /
        ("braze_shipped_schedulers_" + std::to_string(::getpid()));
    RegistryOptions options;
    options.user_dir = scratch / "user";
    options.install_dir = scratch / "install";
    options.cache_file = scratch / "probe-cache.json";
    std::filesystem::create_directories(*options.user_dir);
    std::filesystem::create_directories(*options.install_dir);
    return SchedulerRegistry(options);
  }();
  return registry;
}

}  // namespace braze::test
