// braze compile: ahead-of-time builds of the persistent cache from a saved fusion definition.
//
// For each input signature it prepares the fusion through FusionExecutorCache::prepare on host
// tensors of that signature, with RunOptions::arch set: that segments the fusion, runs the
// schedulers, lowers and compiles every kernel with NVRTC, and the kernel and decision stores
// write what was built into the cache folder. Nothing runs, on a GPU or on the reference
// evaluator; scheduling assumes the target's GPU (sm_90: H100, sm_100: B200) unless the
// machine has one of that architecture, so that the runtime decisions carry the key a process
// on that GPU looks up.

#include "compile_command.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "braze/driver/device_properties.h"
#include "braze/driver/nvrtc_compiler.h"
#include "braze/error.h"
#include "braze/runtime/decision_store.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/kernel_store.h"
#include "braze/serde/fusion_definition.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"

namespace braze::cli {

namespace {

constexpr const char* kHelp =
    "usage: braze compile DEFINITION.bzf --arch sm_90|sm_100 [--dir CACHE_DIR]\n"
    "                     (--signature SIG)... [--signatures FILE]\n"
    "\n"
    "Builds the persistent cache entries of a saved fusion definition (a .bzf file written by\n"
    "braze::serde::saveFusionDefinition) ahead of time: for each input signature it segments\n"
    "the fusion, runs the schedulers, and compiles every kernel with NVRTC for --arch, then\n"
    "stores the kernels (CACHE_DIR/kernels) and the runtime decisions (CACHE_DIR/runtimes).\n"
    "A process that later runs the same fusion on such inputs with RunOptions::arch set to the\n"
    "same target and this cache folder calls NVRTC for none of them. No GPU is needed: without\n"
    "one, scheduling assumes the target's GPU (sm_90: H100, sm_100: B200).\n"
    "\n"
    "  --arch ARCH         sm_90 or sm_100 (sm_90a, sm_100a for arch-specific kernels)\n"
    "  --dir CACHE_DIR     the cache folder (default: $BRAZE_CACHE_DIR, else\n"
    "                      $XDG_CACHE_HOME/braze, else ~/.cache/braze)\n"
    "  --signature SIG     one set of inputs, one entry per fusion input, separated by ';':\n"
    "                        bf16[8192,4096]      a contiguous tensor (dtypes: bool, i32, i64,\n"
    "                                             f16, bf16, f32, f64 or full names)\n"
    "                        f32[64,128]:[1,64]   with strides, in elements\n"
    "                        f64=1e-5  i64=3      scalars\n"
    "  --signatures FILE   one signature per line; '#' starts a comment\n"
    "\n"
    "Prints one line per signature (segments, kernels, NVRTC calls, seconds) and a total.\n"
    "Exits 1 when any signature fails, 2 on a usage error.\n";

int usageError(const std::string& message) {
  std::cerr << "braze compile: " << message << "\n(braze compile --help shows the usage)\n";
  return 2;
}

std::string trim(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

DataType parseShortDtype(const std::string& name) {
  static const std::pair<const char*, DataType> kShort[] = {
      {"bool", DataType::Bool},   {"b8", DataType::Bool},     {"i32", DataType::Int32},
      {"i64", DataType::Int64},   {"f16", DataType::Float16}, {"bf16", DataType::BFloat16},
      {"f32", DataType::Float32}, {"f64", DataType::Float64},
  };
  for (const auto& [spelling, dtype] : kShort) {
    if (name == spelling) return dtype;
  }
  if (std::optional<DataType> dtype = parseDataType(name)) return *dtype;
  BRAZE_THROW() << "unknown dtype '" << name
                << "'; use bool, i32, i64, f16, bf16, f32 or f64 (or float32, bfloat16, ...)";
}

// "[8192,4096]" -> {8192, 4096}.
std::vector<int64_t> parseList(const std::string& text, std::string_view what) {
  BRAZE_USER_CHECK(text.size() >= 2 && text.front() == '[' && text.back() == ']')
      << what << " '" << text << "' must be a list in brackets, such as [64,128]";
  std::vector<int64_t> values;
  std::stringstream items(text.substr(1, text.size() - 2));
  std::string item;
  while (std::getline(items, item, ',')) {
    const std::string number = trim(item);
    if (number.empty()) continue;
    size_t used = 0;
    int64_t value = 0;
    try {
      value = std::stoll(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    BRAZE_USER_CHECK(used == number.size())
        << what << " '" << text << "': '" << number << "' is not an integer";
    values.push_back(value);
  }
  return values;
}

// Random values of the dtype (a float in [-1, 1]); integers are 0 so that index inputs
// (index_select, gather) are valid for any size.
/// A host tensor of these sizes and strides; its values are never read (prepare only looks at
/// the arguments' metadata), so they are left uninitialized.
HostTensor makeTensor(DataType dtype, const std::vector<int64_t>& sizes,
                      std::optional<std::vector<int64_t>> strides) {
  for (int64_t size : sizes) {
    BRAZE_USER_CHECK(size >= 0) << "size " << size << " is negative";
  }
  if (!strides) return HostTensor::empty(dtype, sizes);
  BRAZE_USER_CHECK(strides->size() == sizes.size())
      << strides->size() << " strides for " << sizes.size() << " sizes";
  // The storage a view of these sizes and strides reaches: one past its furthest element.
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    BRAZE_USER_CHECK((*strides)[d] >= 0) << "stride " << (*strides)[d] << " is negative";
    if (sizes[d] == 0) extent = 0;
    if (extent > 0) extent += (sizes[d] - 1) * (*strides)[d];
  }
  HostTensor storage = HostTensor::empty(dtype, {std::max<int64_t>(extent, 1)});
  return HostTensor::borrow(dtype, sizes, *strides, storage.data(), storage.owner());
}

// "bf16[8192,4096]; f32[4096]:[1]; f64=1e-5" -> one argument per entry.
std::vector<FusionArgument> parseSignature(const std::string& signature) {
  std::vector<FusionArgument> arguments;
  std::stringstream entries(signature);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    entry = trim(entry);
    const size_t index = arguments.size();
    try {
      BRAZE_USER_CHECK(!entry.empty()) << "the entry is empty";
      if (const size_t equals = entry.find('='); equals != std::string::npos) {
        const DataType dtype = parseShortDtype(trim(entry.substr(0, equals)));
        const std::string value = trim(entry.substr(equals + 1));
        size_t used = 0;
        ScalarValue parsed = false;
        try {
          if (isFloatingPoint(dtype)) {
            parsed = std::stod(value, &used);
          } else if (isBoolean(dtype)) {
            BRAZE_USER_CHECK(value == "true" || value == "false")
                << "a bool is true or false, not '" << value << "'";
            parsed = value == "true";
            used = value.size();
          } else {
            parsed = static_cast<int64_t>(std::stoll(value, &used));
          }
        } catch (const std::invalid_argument&) {
          used = 0;
        } catch (const std::out_of_range&) {
          used = 0;
        }
        BRAZE_USER_CHECK(used == value.size() && !value.empty())
            << "'" << value << "' is not a value of dtype " << dtype;
        arguments.emplace_back(castScalar(parsed, dtype));
        continue;
      }
      const size_t open = entry.find('[');
      BRAZE_USER_CHECK(open != std::string::npos)
          << "'" << entry << "' is neither a tensor (dtype[sizes]) nor a scalar (dtype=value)";
      const size_t close = entry.find(']', open);
      BRAZE_USER_CHECK(close != std::string::npos) << "'" << entry << "' lacks a ']'";
      const DataType dtype = parseShortDtype(trim(entry.substr(0, open)));
      const std::vector<int64_t> sizes = parseList(entry.substr(open, close - open + 1), "sizes");
      std::optional<std::vector<int64_t>> strides;
      const std::string rest = trim(entry.substr(close + 1));
      if (!rest.empty()) {
        BRAZE_USER_CHECK(rest.front() == ':')
            << "after the sizes comes ':[strides]' or nothing, not '" << rest << "'";
        strides = parseList(trim(rest.substr(1)), "strides");
      }
      arguments.emplace_back(makeTensor(dtype, sizes, strides));
    } catch (const Error& error) {
      BRAZE_THROW() << "input " << index << ": " << error.what();
    }
  }
  return arguments;
}

std::vector<std::string> readSignatureFile(const std::string& path) {
  std::ifstream in(path);
  BRAZE_USER_CHECK(in.good()) << "cannot read the signatures file '" << path << "'";
  std::vector<std::string> signatures;
  std::string line;
  while (std::getline(in, line)) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (!line.empty()) signatures.push_back(line);
  }
  return signatures;
}

struct Arguments {
  std::string definition;
  std::optional<driver::GpuArch> arch;
  std::optional<std::filesystem::path> directory;
  std::vector<std::string> signatures;
};

}  // namespace

int runCompileCommand(const std::vector<std::string>& args) {
  Arguments parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kHelp;
      return 0;
    }
    const bool has_value = i + 1 < args.size();
    if (arg == "--arch" || arg == "--dir" || arg == "--signature" || arg == "--signatures") {
      if (!has_value) return usageError(arg + " needs a value");
      const std::string& value = args[++i];
      if (arg == "--arch") {
        parsed.arch = driver::GpuArch::parse(value);
        if (!parsed.arch || !driver::propertiesForArch(*parsed.arch))
          return usageError("--arch " + value +
                            " is not a target braze compile builds for; "
                            "use sm_90 or sm_100 (or sm_90a, sm_100a)");
      } else if (arg == "--dir") {
        parsed.directory = value;
      } else if (arg == "--signature") {
        parsed.signatures.push_back(value);
      } else {
        try {
          for (std::string& s : readSignatureFile(value)) parsed.signatures.push_back(std::move(s));
        } catch (const Error& error) {
          return usageError(error.what());
        }
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'");
    } else if (parsed.definition.empty()) {
      parsed.definition = arg;
    } else {
      return usageError("more than one definition given ('" + parsed.definition + "', '" + arg +
                        "'); compile one definition per call");
    }
  }
  if (parsed.definition.empty()) return usageError("no definition file given");
  if (!parsed.arch) return usageError("--arch is required (sm_90 or sm_100)");
  if (parsed.signatures.empty())
    return usageError("no input signature given; pass --signature or --signatures");

  std::optional<serde::CacheOptions> cache_options;
  if (parsed.directory) {
    cache_options = serde::CacheOptions{.directory = *parsed.directory};
  } else {
    cache_options = serde::defaultCacheOptions();
    if (!cache_options)
      return usageError(
          "no cache folder: BRAZE_CACHE_DIR is off or no home folder is known; "
          "pass --dir");
  }
  cache_options->log = &std::cerr;

  std::unique_ptr<Fusion> fusion;
  try {
    fusion = serde::loadFusionDefinition(parsed.definition);
  } catch (const Error& error) {
    std::cerr << "braze compile: " << error.what() << "\n";
    return 1;
  }
  auto kernels = std::make_shared<serde::KernelCache>(*cache_options);
  auto runtimes = std::make_shared<serde::RuntimeCache>(*cache_options);
  setDefaultKernelStore(kernels);
  setDefaultDecisionStore(runtimes);

  std::cout << "compiling " << parsed.definition << " for " << parsed.arch->toString() << " into "
            << cache_options->directory.string() << "\n";
  // Without a GPU, the runs schedule for the device the architecture names (decisions are keyed
  // by its properties); with one, for that GPU.
  RunOptions run_options;
  run_options.arch = parsed.arch;
  int failures = 0;
  int64_t total_kernels = 0;
  int64_t total_nvrtc = 0;
  const auto start_all = std::chrono::steady_clock::now();
  for (size_t i = 0; i < parsed.signatures.size(); ++i) {
    const std::string& signature = parsed.signatures[i];
    const auto start = std::chrono::steady_clock::now();
    const int64_t nvrtc_before = driver::nvrtcCompileCount();
    try {
      const std::vector<FusionArgument> inputs = parseSignature(signature);
      // One executor per signature, so each line counts only what its signature built.
      FusionExecutorCache executor(*fusion);
      const std::shared_ptr<const FusionKernelRuntime> runtime =
          executor.prepare(inputs, run_options);
      const ExecutorCacheCounters counters = executor.counters();
      const int64_t nvrtc = driver::nvrtcCompileCount() - nvrtc_before;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      total_kernels += counters.kernels_compiled;
      total_nvrtc += nvrtc;
      std::cout << "signature " << i + 1 << " \"" << signature
                << "\": segments=" << (runtime ? runtime->segmentation().segments.size() : 0)
                << " kernels=" << counters.kernels_compiled << " nvrtc_calls=" << nvrtc
                << " from_store=" << counters.kernels_from_store
                << " restored=" << counters.runtimes_restored << " seconds=" << std::fixed
                << std::setprecision(2) << seconds << std::defaultfloat << "\n";
    } catch (const std::exception& error) {
      ++failures;
      std::cout << "signature " << i + 1 << " \"" << signature << "\": FAILED\n";
      std::cerr << "braze compile: signature " << i + 1 << " \"" << signature
                << "\": " << error.what() << "\n";
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_all).count();
  const serde::KernelCacheCounters written = kernels->counters();
  std::cout << "total: signatures=" << parsed.signatures.size() << " failed=" << failures
            << " kernels=" << total_kernels << " nvrtc_calls=" << total_nvrtc
            << " kernel_writes=" << written.writes << " seconds=" << std::fixed
            << std::setprecision(2) << seconds << "\n";
  setDefaultKernelStore(nullptr);
  setDefaultDecisionStore(nullptr);
  return failures == 0 && written.write_failures == 0 ? 0 : 1;
}

}  // namespace braze::cli
