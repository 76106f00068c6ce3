// braze-plugin-scanner LIBRARY: loads one plugin with every check and exits 0, or prints the
// error and exits 1. Run in a child process by the plugin registry, so that a plugin that
// crashes or hangs while loading takes down only this process.

#include <cstdio>
#include <exception>

#include "braze/plugin/plugin_loader.h"

// In a sanitized build the sanitizers' runtime catches deadly signals, prints its report and
// exits with status 1; the registry tells a plugin that crashed while loading by the signal
// the scanner died of. So deadly signals kill the scanner as they would without a sanitizer.
// (These hooks are read by the sanitizers' runtime when there is one; otherwise unused.)
constexpr const char* kDeadlySignalsKill =
    "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
  return kDeadlySignalsKill;
}
extern "C" __attribute__((used, visibility("default"))) const char* __ubsan_default_options() {
  return kDeadlySignalsKill;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: braze-plugin-scanner LIBRARY\n");
    return 2;
  }
  try {
    braze::loadPlugin(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
