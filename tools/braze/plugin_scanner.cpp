// braze-plugin-scanner LIBRARY: loads one plugin with every check and exits 0, or prints the
// error and exits 1. Run in a child process by the plugin registry, so that a plugin that
// crashes or hangs while loading takes down only this process.

#include <cstdio>
#include <exception>

#include "braze/plugin/plugin_loader.h"

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
