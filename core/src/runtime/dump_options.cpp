#include "braze/runtime/dump_options.h"

#include <cstdlib>
#include <iostream>
#include <string>

#include "braze/error.h"

namespace braze {

namespace {

struct Switch {
  std::string_view name;
  bool DumpOptions::*field;
};

constexpr Switch kSwitches[] = {
    {"fusion", &DumpOptions::fusion},
    {"scheduled", &DumpOptions::scheduled},
    {"lowering", &DumpOptions::lowering},
    {"cuda_kernel", &DumpOptions::cuda_kernel},
    {"ptx", &DumpOptions::ptx},
    {"compile_log", &DumpOptions::compile_log},
    {"launch_params", &DumpOptions::launch_params},
    {"segments", &DumpOptions::segments},
    {"host_ir", &DumpOptions::host_ir},
    {"segments_dot", &DumpOptions::segments_dot},
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

DumpOptions DumpOptions::parse(std::string_view text) {
  DumpOptions options;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view name = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (name.empty()) continue;
    bool known = false;
    for (const Switch& entry : kSwitches) {
      if (entry.name == name) {
        options.*entry.field = true;
        known = true;
      }
    }
    if (!known) {
      std::string valid;
      for (const Switch& entry : kSwitches)
        valid += (valid.empty() ? "" : ", ") + std::string(entry.name);
      BRAZE_THROW() << "BRAZE_DUMP: unknown switch '" << name << "'; valid switches are " << valid
                    << " (comma-separated)";
    }
  }
  return options;
}

DumpOptions DumpOptions::fromEnvironment() {
  const char* value = std::getenv("BRAZE_DUMP");
  DumpOptions options = value == nullptr ? DumpOptions{} : parse(value);
  if (const char* folder = std::getenv("BRAZE_DUMP_DIR"); folder != nullptr && *folder != '\0')
    options.folder = folder;
  return options;
}

std::ostream& DumpOptions::out() const {
  return stream != nullptr ? *stream : std::cerr;
}

}  // namespace braze
