#pragma once

// A sweep of one scheduler's kernel shapes around its heuristics, for the normalization cases of
// normalization_cases.h: for each selected case, the kernel the heuristics choose and variants
// of its params, each checked against the reference evaluator on the case's first rows and
// timed (median of 7 samples of 10 launches, bandwidth_timing.h), a table per case, fastest
// first, as a fraction of the device-to-device copy. How heuristics' constants are chosen, and
// how to check them on another GPU. The scheduler is linked directly (not loaded through the
// registry), so that params other than the heuristics' can be applied.
//
//   <tool> [--filter=REGEX] [--variants=REGEX] [--set=FIELD=V,FIELD=V ...] [--input_mib=MIB]
//          [--jobs=N] [--compile_only] [--print_source] [--force]
//
// --filter matches "<op>/<dtype>/<N>"; --variants keeps the variants whose params (as printed)
// match, besides the heuristics' own; each --set adds a variant: the heuristics' params with
// those integer fields changed (as the params print them). --compile_only needs no GPU: it
// compiles every variant for sm_90 (an H100's properties) and prints registers and spills.
// --force sweeps the cases the scheduler refuses as well.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "braze/codegen/codegen.h"
#include "braze/driver/device_properties.h"
#include "braze/driver/primary_context.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/sched/schedule_printer.h"
#include "normalization_cases.h"

namespace braze::bench {

struct SweepOptions {
  std::string filter;
  int64_t input_mib = 256;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool compile_only = false;      ///< no GPU needed: compile for sm_90 and print resources only
  std::string variants = ".*";    ///< the variants to keep (the heuristics' choice always)
  std::vector<std::string> sets;  ///< --set specs: field changes of the heuristics' params
  bool print_source = false;
  /// Sweep cases the scheduler refuses too (their refusal printed): what a refusal's measured
  /// numbers come from.
  bool force = false;
};

template <typename Params>
struct SweepVariant {
  Params params;
  bool fast_math = false;
  bool heuristic = false;
  /// Compiled without the kernel's __launch_bounds__: ptxas then budgets registers for any
  /// block size.
  bool unbounded = false;
};

/// What a sweep needs of a scheduler.
template <typename Params>
struct SweptScheduler {
  const char* tool;  ///< the program's name, for messages
  std::string default_filter;
  /// Which cases of normalization_cases.h the sweep may take (before --filter).
  std::function<bool(const OpInfo&)> takes;
  std::function<std::optional<std::string>(const Fusion&, const SchedulerRuntimeInfo&)> refusal;
  std::function<Params(const Fusion&, const SchedulerRuntimeInfo&)> heuristics;
  /// The variants to try besides the heuristics' (which comes first).
  std::function<std::vector<SweepVariant<Params>>(const Params&)> variants;
  std::function<void(Fusion&, const Params&)> schedule;
  std::function<std::string(const Params&)> print;
};

/// `params` with the integer fields named in `spec` ("cluster=2,stages=3") changed (an enum
/// field by its number); throws on a field it does not have.
template <typename Params>
Params withFields(Params params, const std::string& spec) {
  std::stringstream items(spec);
  std::string item;
  while (std::getline(items, item, ',')) {
    const size_t eq = item.find('=');
    bool found = false;
    Params::forEachField(params, [&](const char* name, auto& field) {
      using Field = std::decay_t<decltype(field)>;
      if constexpr (std::is_same_v<Field, int64_t> || std::is_enum_v<Field>) {
        if (eq != std::string::npos && item.substr(0, eq) == name) {
          field = static_cast<Field>(std::stoll(item.substr(eq + 1)));
          found = true;
        }
      }
    });
    if (!found) throw std::invalid_argument("--set: no integer field '" + item + "'");
  }
  return params;
}

template <typename Params>
struct CompiledVariant {
  SweepVariant<Params> variant;
  std::unique_ptr<Fusion> scheduled;
  GeneratedKernel kernel;
  std::optional<CompiledKernel> compiled;
  std::string error;
};

template <typename Params>
CompiledVariant<Params> compileVariant(const SweptScheduler<Params>& scheduler,
                                       const Fusion& fusion, const SweepVariant<Params>& variant,
                                       std::optional<driver::GpuArch> arch) {
  CompiledVariant<Params> result{variant, nullptr, {}, std::nullopt, ""};
  try {
    result.scheduled = fusion.clone();
    scheduler.schedule(*result.scheduled, variant.params);
    result.kernel = generateCuda(*result.scheduled);
    if (variant.unbounded) {
      std::string& source = result.kernel.source;
      const size_t at = source.find("__launch_bounds__(");
      if (at != std::string::npos) source.erase(at, source.find(") ", at) + 2 - at);
    }
    CompileOptions options;
    options.fast_math = variant.fast_math;
    options.arch = arch;
    result.compiled =
        CompiledKernel::compile(result.kernel.source, result.kernel.kernel_name, options);
  } catch (const std::exception& error) {
    result.error = error.what();
  }
  return result;
}

struct SweepTiming {
  std::string label;
  double seconds = 0.0;
  std::string error;
};

template <typename Params>
std::string variantLabel(const SweptScheduler<Params>& scheduler,
                         const SweepVariant<Params>& variant) {
  return scheduler.print(variant.params) + (variant.fast_math ? " fast_math" : "") +
         (variant.unbounded ? " no_launch_bounds" : "");
}

template <typename Params>
SweepTiming timeVariant(CompiledVariant<Params>& c, Op op, DataType dtype,
                        const std::vector<ExecutorArgument>& inputs, int64_t& bytes_out,
                        CUstream stream) {
  SweepTiming t;
  try {
    ScheduledCase sc;
    sc.scheduled = std::move(c.scheduled);
    sc.executor = std::make_unique<KernelExecutor>(*sc.scheduled, std::move(c.kernel),
                                                   std::move(*c.compiled));
    sc.inputs = inputs;
    sc.outputs = poisonedOutputs(*sc.executor, sc.inputs, stream);
    if (bytes_out == 0) {
      for (const DeviceTensor& output : sc.outputs)
        bytes_out += output.numel() * sizeInBytes(output.dtype());
    }
    sc.launch(stream);
    BRAZE_CU(streamSynchronize, stream);
    t.error = checkLeadingRows(op, dtype, deviceTensorsOf(sc.inputs), sc.outputs);
    if (t.error.empty()) {
      EventTimer timer(stream);
      std::vector<double> samples;
      for (int i = 0; i < 7; ++i) samples.push_back(timer.time([&] { sc.launch(stream); }));
      t.seconds = median(samples);
    }
  } catch (const std::exception& error) {
    t.error = std::string(error.what()).substr(0, 160);
  }
  return t;
}

template <typename Params>
void sweepCase(const SweptScheduler<Params>& scheduler, Op op, DataType dtype, int64_t n,
               const SweepOptions& options, CUstream stream, double copy_bandwidth) {
  const int64_t m = rowsFor(n, dtype, options.input_mib);
  const std::unique_ptr<Fusion> fusion = defineFusion(op, dtype);
  std::vector<ExecutorArgument> inputs;
  SchedulerRuntimeInfo info;
  std::optional<driver::GpuArch> arch;
  int64_t bytes = 0;      // every input read once
  int64_t bytes_out = 0;  // every output written once (from the first variant that runs)
  if (options.compile_only) {
    std::vector<std::vector<int64_t>> sizes;
    for (const InputSpec& spec : inputsOf(op, dtype, m, n)) sizes.push_back(spec.sizes);
    info = contiguousRuntimeInfo(*fusion, sizes);
    arch = driver::GpuArch{9, 0, false};
  } else {
    info.device = driver::deviceProperties(0);
    uint32_t seed = 1;
    for (const InputSpec& spec : inputsOf(op, dtype, m, n)) {
      DeviceTensor tensor = DeviceTensor::empty(spec.dtype, spec.sizes);
      fillUniform(tensor, spec.low, spec.high, seed++, stream);
      info.arguments.emplace_back(tensor.argumentInfo());
      info.data_alignments.push_back(alignmentOf(tensor.data()));
      bytes += tensor.numel() * sizeInBytes(tensor.dtype());
      inputs.emplace_back(std::move(tensor));
    }
  }
  if (auto reason = scheduler.refusal(*fusion, info)) {
    std::cout << "  declined: " << *reason << "\n";
    if (!options.force) return;
  }
  const Params chosen = scheduler.heuristics(*fusion, info);
  std::vector<SweepVariant<Params>> variants{{chosen, false, true}};
  for (SweepVariant<Params>& v : scheduler.variants(chosen)) variants.push_back(std::move(v));
  const std::regex keep(options.variants);
  std::erase_if(variants, [&](const SweepVariant<Params>& v) {
    return !v.heuristic && !std::regex_search(variantLabel(scheduler, v), keep);
  });
  for (const std::string& spec : options.sets) variants.push_back({withFields(chosen, spec)});

  // Compile in parallel: each variant schedules its own copy of the fusion.
  std::vector<CompiledVariant<Params>> compiled(variants.size());
  for (size_t first = 0; first < variants.size(); first += options.jobs) {
    std::vector<std::future<CompiledVariant<Params>>> pending;
    for (size_t i = first; i < std::min(variants.size(), first + options.jobs); ++i) {
      pending.push_back(std::async(std::launch::async, [&, i] {
        return compileVariant(scheduler, *fusion, variants[i], arch);
      }));
    }
    for (size_t i = 0; i < pending.size(); ++i) compiled[first + i] = pending[i].get();
  }

  std::vector<SweepTiming> timings;
  for (CompiledVariant<Params>& c : compiled) {
    const std::string label =
        (c.variant.heuristic ? "* " : "  ") + variantLabel(scheduler, c.variant);
    if (options.print_source) {
      std::cout << "// " << label << "\n" << c.kernel.source << "\n";
      if (!c.error.empty() && c.scheduled)
        std::cout << c.error << "\n" << printSchedule(*c.scheduled) << "\n";
    }
    std::string resources;
    if (c.compiled && c.compiled->resources().reported) {
      const KernelResources& r = c.compiled->resources();
      resources =
          " [" + std::to_string(r.registers) + " registers" +
          (r.spill_store_bytes > 0 ? ", " + std::to_string(r.spill_store_bytes) + " bytes spilled"
                                   : "") +
          // Arrays indexed at run time live on the stack, not in registers.
          (r.stack_frame_bytes > 0 ? ", " + std::to_string(r.stack_frame_bytes) + " bytes of stack"
                                   : "") +
          "]";
    }
    SweepTiming t;
    if (!c.error.empty() || options.compile_only) {
      t.error = c.error.empty() ? "not timed (--compile_only)" : c.error.substr(0, 160);
    } else {
      t = timeVariant(c, op, dtype, inputs, bytes_out, stream);
    }
    t.label = label + resources;
    timings.push_back(t);
  }
  std::stable_sort(timings.begin(), timings.end(), [](const SweepTiming& a, const SweepTiming& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return a.seconds < b.seconds;
  });
  for (const SweepTiming& t : timings) {
    if (!t.error.empty()) {
      std::cout << "  " << t.label << "  error: " << t.error << "\n";
      continue;
    }
    const double bandwidth = static_cast<double>(bytes + bytes_out) / t.seconds;
    std::printf("  %8.1f us %6.0f GB/s %5.1f%%  %s\n", t.seconds * 1e6, bandwidth / 1e9,
                100.0 * bandwidth / copy_bandwidth, t.label.c_str());
  }
}

inline std::optional<SweepOptions> parseSweepOptions(int argc, char** argv, const char* tool,
                                                     std::string default_filter) {
  SweepOptions options;
  options.filter = std::move(default_filter);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--filter=")) {
      options.filter = std::string(arg.substr(9));
    } else if (arg.starts_with("--input_mib=")) {
      options.input_mib = std::atoll(argv[i] + 12);
    } else if (arg == "--compile_only") {
      options.compile_only = true;
    } else if (arg.starts_with("--variants=")) {
      options.variants = std::string(arg.substr(11));
    } else if (arg.starts_with("--set=")) {
      options.sets.emplace_back(arg.substr(6));
    } else if (arg == "--print_source") {
      options.print_source = true;
    } else if (arg == "--force") {
      options.force = true;
    } else if (arg.starts_with("--jobs=")) {
      options.jobs = static_cast<unsigned>(std::max(1, std::atoi(argv[i] + 7)));
    } else {
      std::cerr << tool << ": unknown argument '" << arg
                << "'; usage: [--filter=REGEX] [--variants=REGEX] [--set=FIELD=V,...] "
                   "[--input_mib=MIB] [--jobs=N] [--compile_only] [--print_source] [--force]\n";
      return std::nullopt;
    }
  }
  if (options.input_mib <= 0) {
    std::cerr << tool << ": --input_mib needs a positive number of MiB\n";
    return std::nullopt;
  }
  return options;
}

/// The program: parses the options, then sweeps every selected case.
template <typename Params>
int runSweep(int argc, char** argv, const SweptScheduler<Params>& scheduler) {
  const std::optional<SweepOptions> options =
      parseSweepOptions(argc, argv, scheduler.tool, scheduler.default_filter);
  if (!options) return 2;
  try {
    CUstream stream = nullptr;
    double copy = 0.0;
    if (!options->compile_only) {
      std::string reason;
      if (!driver::isDriverAvailable(&reason)) {
        std::cerr << scheduler.tool
                  << ": no CUDA driver or device (--compile_only needs none): " << reason << "\n";
        return 1;
      }
      driver::makePrimaryContextCurrent(0);
      BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
      copy = copyBandwidth(stream);
      std::printf("device-to-device copy: %.0f GB/s\n", copy / 1e9);
    }
    const std::regex filter(options->filter);
    for (const OpInfo& op : kOps) {
      for (const DataType dtype : kDtypes) {
        for (const int64_t n : kRowLengths) {
          const std::string name =
              std::string(op.name) + "/" + std::string(shortName(dtype)) + "/" + std::to_string(n);
          if (!scheduler.takes(op) || !std::regex_search(name, filter)) continue;
          std::cout << name << " (M=" << rowsFor(n, dtype, options->input_mib) << ")\n";
          sweepCase(scheduler, op.op, dtype, n, *options, stream, copy);
        }
      }
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << scheduler.tool << ": " << error.what() << "\n";
    return 1;
  }
}

}  // namespace braze::bench
