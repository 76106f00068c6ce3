// The persistent cache from Python (braze.cache): switch it on, and save, load, list, prune or
// clear the kernels of a cache folder.

#include <pybind11/stl.h>

#include <filesystem>

#include "bindings.h"
#include "braze/error.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"

namespace braze::python {

namespace {

serde::CacheOptions optionsFor(const py::object& directory) {
  if (!directory.is_none()) {
    serde::CacheOptions options;
    options.directory = std::filesystem::path(py::str(directory).cast<std::string>());
    return options;
  }
  std::optional<serde::CacheOptions> options = serde::defaultCacheOptions();
  BRAZE_USER_CHECK(options.has_value())
      << "braze.cache: no cache folder (BRAZE_CACHE_DIR is off, or neither XDG_CACHE_HOME nor "
         "HOME is set); pass directory=";
  options->log = nullptr;  // results come back to the caller instead
  return *options;
}

std::string timeText(std::filesystem::file_time_type time) {
  const auto since = time.time_since_epoch();
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(since).count());
}

}  // namespace

void bindCache(py::module_& m) {
  m.def("use_persistent_cache", &serde::useDefaultPersistentCache,
        "Keeps kernels and decisions in $BRAZE_CACHE_DIR (default ~/.cache/braze) for later "
        "processes");
  m.def("cache_directory", []() -> py::object {
    std::optional<std::filesystem::path> directory = serde::defaultCacheDirectory();
    if (!directory) return py::none();
    return py::str(directory->string());
  });
  m.def(
      "cache_save",
      [](const py::object& path, const py::object& directory) {
        return serde::KernelCache(optionsFor(directory)).save(py::str(path).cast<std::string>());
      },
      py::arg("path"), py::arg("directory") = py::none(),
      "Writes every valid kernel of the folder into one bundle file; returns how many");
  m.def(
      "cache_load",
      [](const py::object& path, const py::object& directory) {
        const serde::KernelCache::LoadReport report =
            serde::KernelCache(optionsFor(directory)).load(py::str(path).cast<std::string>());
        py::dict d;
        d["added"] = report.added;
        d["skipped"] = report.skipped;
        d["problems"] = report.problems;
        return d;
      },
      py::arg("path"), py::arg("directory") = py::none(),
      "Adds a bundle's kernels that pass every check to the folder: {added, skipped, problems}");
  m.def(
      "cache_entries",
      [](const py::object& directory) {
        py::list entries;
        for (const serde::KernelEntryInfo& info :
             serde::KernelCache(optionsFor(directory)).entries()) {
          py::dict d;
          d["path"] = info.path.string();
          d["key"] = info.key;
          d["bytes"] = info.bytes;
          d["valid"] = info.valid;
          d["problem"] = info.problem;
          d["kernel_name"] = info.kernel_name;
          d["arch"] = info.arch;
          d["registers"] = info.registers;
          d["last_use"] = timeText(info.last_use);
          entries.append(d);
        }
        return entries;
      },
      py::arg("directory") = py::none(), "The kernel entries of the folder, checked");
  m.def(
      "cache_prune",
      [](int64_t max_bytes, const py::object& directory) {
        return serde::KernelCache(optionsFor(directory)).prune(max_bytes);
      },
      py::arg("max_bytes"), py::arg("directory") = py::none(),
      "Removes the least recently used kernels until the rest fit in max_bytes; returns how many");
  m.def(
      "cache_clear",
      [](const py::object& directory) {
        serde::CacheOptions options = optionsFor(directory);
        return serde::KernelCache(options).clear() + serde::RuntimeCache(options).clear();
      },
      py::arg("directory") = py::none(),
      "Removes every kernel and runtime entry of the folder; returns how many");
}

}  // namespace braze::python
