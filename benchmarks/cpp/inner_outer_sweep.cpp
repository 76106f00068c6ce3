// A sweep of the inner-outer scheduler's kernel shapes around its heuristics: for each
// selected normalization case (normalization_cases.h), the kernel the heuristics choose and
// variants of it (persistent batch, rows per block, blocks per SM of the launch bounds, no
// launch bounds, fast math; for rows too long for registers, threads and vectors per wave
// iteration), each checked against the reference evaluator and timed. It is how the heuristics'
// constants were chosen, and how to check them on another GPU:
//
//   braze_inner_outer_sweep [--filter=REGEX] [--variants=REGEX] [--input_mib=MIB] [--jobs=N]
//                           [--compile_only] [--print_source]
//
// --compile_only needs no GPU: it compiles every variant for sm_90 (an H100's properties) and
// prints the registers and spills ptxas reports, which the timed run shows too when NVRTC
// reports them.
// --variants keeps the variants whose params (as printed) match, besides the heuristics' own;
// --print_source prints each variant's CUDA source before its table.
// The --filter REGEX matches "<op>/<dtype>/<N>" (default: the forward ops, rows up to 16384).
// Variants are compiled in parallel (--jobs, default: the hardware threads), then timed one after
// another as bandwidth_timing.h times (median of 7 samples of 10 launches); a table per case,
// fastest first, with the bandwidth as a fraction of the device-to-device copy.
//
// The scheduler is linked directly (not loaded through the registry), so that params other
// than the heuristics' can be applied.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "braze/codegen/codegen.h"
#include "braze/driver/device_properties.h"
#include "braze/driver/primary_context.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/sched/schedule_printer.h"
#include "inner_outer_scheduler.h"
#include "normalization_cases.h"

namespace braze::bench {
namespace {

struct SweepOptions {
  std::string filter =
      "(softmax_fwd|layer_norm_fwd|rms_norm_fwd)/(bf16|fp32)/(256|1000|1024|4096|8192|16384)$";
  int64_t input_mib = 256;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool compile_only = false;    ///< no GPU needed: compile for sm_90 and print resources only
  std::string variants = ".*";  ///< the variants to keep (the heuristics' choice always)
  bool print_source = false;
};

struct Variant {
  inner_outer::InnerOuterParams params;
  bool fast_math = false;
  bool heuristic = false;
  /// Compiled without the kernel's __launch_bounds__ (how kernels were compiled before
  /// schedulers stated them): ptxas then budgets registers for any block size.
  bool unbounded = false;
};

struct CompiledVariant {
  Variant variant;
  std::unique_ptr<Fusion> scheduled;
  GeneratedKernel kernel;
  std::optional<CompiledKernel> compiled;
  std::string error;
};

// Every variant of `list` also with each blocks-per-SM launch bound (min_blocks_per_sm) that
// leaves a thread at least 32 registers (2048 threads per SM), to see what a block overlapping
// another's memory phase is worth against the registers it gives up.
std::vector<Variant> withBlocksPerSm(std::vector<Variant> list, std::vector<int64_t> blocks) {
  const size_t n = list.size();
  for (size_t i = 0; i < n; ++i) {
    if (list[i].fast_math) continue;
    for (int64_t b : blocks) {
      const int64_t threads = list[i].params.threads_x * list[i].params.rows_per_block;
      if (b == list[i].params.min_blocks_per_sm || threads * b > 2048) continue;
      Variant bounded = list[i];
      bounded.heuristic = false;
      bounded.params.min_blocks_per_sm = b;
      list.push_back(bounded);
    }
  }
  return list;
}

// Every variant of `list` without blocks per SM whose block still states its size (more than
// 512 threads) also compiled without launch bounds: kernels that ptxas may give more registers
// than such a block can launch with.
std::vector<Variant> withUnbounded(std::vector<Variant> list) {
  const size_t n = list.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t threads = list[i].params.threads_x * list[i].params.rows_per_block;
    if (list[i].fast_math || list[i].params.min_blocks_per_sm != 0 || threads <= 512) continue;
    Variant unbounded = list[i];
    unbounded.heuristic = false;
    unbounded.unbounded = true;
    list.push_back(unbounded);
  }
  return list;
}

// The heuristics' params and, for the register shape, every persistent batch and rows per
// block that keeps a block within 1024 threads and the row within one block, each with the
// launch bounds' blocks per SM.
std::vector<Variant> variantsOf(const inner_outer::InnerOuterParams& chosen) {
  std::vector<Variant> variants{{chosen, false, true}, {chosen, true, false}};
  if (chosen.persistence == inner_outer::Persistence::Registers && chosen.row_blocks > 0) {
    // Column sums: rows stacked along threadIdx.y, and one or two blocks per SM (132 SMs).
    for (int64_t rows : {1, 2, 4, 8, 16, 32}) {
      if (chosen.threads_x * rows > 1024) continue;
      for (int64_t blocks : {132, 264}) {
        inner_outer::InnerOuterParams p = chosen;
        p.rows_per_block = rows;
        p.row_blocks = blocks;
        p.min_blocks_per_sm = 0;
        if (p != chosen) variants.push_back({p, false, false});
      }
    }
    variants = withUnbounded(withBlocksPerSm(std::move(variants), {0, 1, 2}));
    // Several rows per thread (their loads issued together, the column partials shared), with
    // 512 or 1024 threads per SM in one, two or four blocks held to their share of the
    // registers, for one, two or four vectors of a row per thread.
    const int64_t vectors = (chosen.row_length + chosen.vector_width - 1) / chosen.vector_width;
    for (int64_t batch : {1, 2, 4}) {
      const int64_t tx = (vectors + batch - 1) / batch;
      if (tx < 32 && batch > 1) continue;
      for (int64_t sm_threads : {512, 1024}) {
        for (int64_t per_sm : {1, 2, 4}) {
          const int64_t rows = sm_threads / per_sm / tx;
          if (rows < 1 || tx * rows > 1024) continue;
          for (int64_t per_thread : {1, 2, 4}) {
            inner_outer::InnerOuterParams p = chosen;
            p.persistent_batch = batch;
            p.threads_x = tx;
            p.rows_per_thread = per_thread;
            p.rows_per_block = rows;
            p.row_blocks = 132 * per_sm;
            p.min_blocks_per_sm = per_sm;
            if (p != chosen) variants.push_back({p, false, false});
          }
        }
      }
    }
    return variants;
  }
  if (chosen.persistence == inner_outer::Persistence::MultiWave) {
    // Multi-wave: threads along a row and vectors each loads per wave iteration. A block of
    // 1024 threads holds 64 registers per thread, which 8 vectors each would spill.
    for (int64_t threads : {256, 512, 1024}) {
      for (int64_t unroll : {1, 2, 4, 8}) {
        if (threads * unroll > 4096) continue;
        inner_outer::InnerOuterParams p = chosen;
        p.threads_x = threads;
        p.wave_unroll = unroll;
        if (p != chosen) variants.push_back({p, false, false});
      }
    }
    return variants;
  }
  if (chosen.persistence != inner_outer::Persistence::Registers) return variants;
  const int64_t vectors = (chosen.row_length + chosen.vector_width - 1) / chosen.vector_width;
  for (int64_t batch : {1, 2, 4, 8, 16}) {
    const int64_t tx = (vectors + batch - 1) / batch;
    if (tx > 1024 || (batch > 1 && (vectors + batch - 2) / (batch - 1) == tx)) continue;
    for (int64_t rows : {1, 2, 4, 8, 16}) {
      // Rows of a warp or more of threads were fastest one per block: stacked only below that.
      if (tx * rows > 1024 || tx * rows < 32 || (rows > 1 && tx >= 128)) continue;
      inner_outer::InnerOuterParams p = chosen;
      p.persistent_batch = batch;
      p.threads_x = tx;
      p.rows_per_block = rows;
      p.min_blocks_per_sm = 0;
      if (p == chosen) continue;
      variants.push_back({p, false, false});
    }
  }
  return withUnbounded(withBlocksPerSm(std::move(variants), {0, 1, 2, 3, 4}));
}

CompiledVariant compileVariant(const Fusion& fusion, const Variant& variant,
                               std::optional<driver::GpuArch> arch) {
  CompiledVariant result{variant, nullptr, {}, std::nullopt, ""};
  try {
    result.scheduled = fusion.clone();
    inner_outer::schedule(*result.scheduled, variant.params);
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

struct Timing {
  std::string label;
  double seconds = 0.0;
  std::string error;
};

void sweepCase(Op op, DataType dtype, int64_t n, const SweepOptions& options, CUstream stream,
               double copy_bandwidth) {
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
  if (auto reason = inner_outer::canScheduleRunTime(*fusion, info)) {
    std::cout << "  declined: " << *reason << "\n";
    return;
  }
  std::vector<Variant> variants = variantsOf(inner_outer::computeHeuristics(*fusion, info));
  const std::regex keep(options.variants);
  std::erase_if(variants, [&](const Variant& v) {
    const std::string label = inner_outer::toString(v.params) + (v.fast_math ? " fast_math" : "") +
                              (v.unbounded ? " no_launch_bounds" : "");
    return !v.heuristic && !std::regex_search(label, keep);
  });

  // Compile in parallel: each variant schedules its own copy of the fusion.
  std::vector<CompiledVariant> compiled(variants.size());
  for (size_t first = 0; first < variants.size(); first += options.jobs) {
    std::vector<std::future<CompiledVariant>> pending;
    for (size_t i = first; i < std::min(variants.size(), first + options.jobs); ++i) {
      pending.push_back(std::async(std::launch::async, compileVariant, std::cref(*fusion),
                                   std::cref(variants[i]), arch));
    }
    for (size_t i = 0; i < pending.size(); ++i) compiled[first + i] = pending[i].get();
  }

  std::vector<Timing> timings;
  for (CompiledVariant& c : compiled) {
    Timing t;
    t.label = (c.variant.heuristic ? "* " : "  ") + inner_outer::toString(c.variant.params) +
              (c.variant.fast_math ? " fast_math" : "") +
              (c.variant.unbounded ? " no_launch_bounds" : "");
    if (options.print_source) {
      std::cout << "// " << t.label << "\n" << c.kernel.source << "\n";
      if (!c.error.empty() && c.scheduled)
        std::cout << c.error << "\n" << printSchedule(*c.scheduled) << "\n";
    }
    if (c.compiled && c.compiled->resources().reported) {
      const KernelResources& r = c.compiled->resources();
      t.label +=
          " [" + std::to_string(r.registers) + " registers" +
          (r.spill_store_bytes > 0 ? ", " + std::to_string(r.spill_store_bytes) + " bytes spilled"
                                   : "") +
          "]";
    }
    if (!c.error.empty() || options.compile_only) {
      t.error = c.error.empty() ? "not timed (--compile_only)" : c.error.substr(0, 160);
      timings.push_back(t);
      continue;
    }
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
    timings.push_back(t);
  }
  std::stable_sort(timings.begin(), timings.end(), [](const Timing& a, const Timing& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return a.seconds < b.seconds;
  });
  for (const Timing& t : timings) {
    if (!t.error.empty()) {
      std::cout << "  " << t.label << "  error: " << t.error << "\n";
      continue;
    }
    const double bandwidth = static_cast<double>(bytes + bytes_out) / t.seconds;
    std::printf("  %8.1f us %6.0f GB/s %5.1f%%  %s\n", t.seconds * 1e6, bandwidth / 1e9,
                100.0 * bandwidth / copy_bandwidth, t.label.c_str());
  }
}

std::optional<SweepOptions> parseOptions(int argc, char** argv) {
  SweepOptions options;
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
    } else if (arg == "--print_source") {
      options.print_source = true;
    } else if (arg.starts_with("--jobs=")) {
      options.jobs = static_cast<unsigned>(std::max(1, std::atoi(argv[i] + 7)));
    } else {
      std::cerr << "braze_inner_outer_sweep: unknown argument '" << arg
                << "'; usage: [--filter=REGEX] [--variants=REGEX] [--input_mib=MIB] [--jobs=N] "
                   "[--compile_only] [--print_source]\n";
      return std::nullopt;
    }
  }
  if (options.input_mib <= 0) {
    std::cerr << "braze_inner_outer_sweep: --input_mib needs a positive number of MiB\n";
    return std::nullopt;
  }
  return options;
}

int sweep(const SweepOptions& options) {
  CUstream stream = nullptr;
  double copy = 0.0;
  if (!options.compile_only) {
    std::string reason;
    if (!driver::isDriverAvailable(&reason)) {
      std::cerr << "braze_inner_outer_sweep: no CUDA driver or device (--compile_only needs "
                   "none): "
                << reason << "\n";
      return 1;
    }
    driver::makePrimaryContextCurrent(0);
    BRAZE_CU(streamCreate, &stream, CU_STREAM_NON_BLOCKING);
    copy = copyBandwidth(stream);
    std::printf("device-to-device copy: %.0f GB/s\n", copy / 1e9);
  }
  const std::regex filter(options.filter);
  for (const OpInfo& op : kOps) {
    for (const DataType dtype : kDtypes) {
      for (const int64_t n : kRowLengths) {
        const std::string name =
            std::string(op.name) + "/" + std::string(shortName(dtype)) + "/" + std::to_string(n);
        if (std::string(op.scheduler) != "braze::inner_outer" || !std::regex_search(name, filter))
          continue;
        std::cout << name << " (M=" << rowsFor(n, dtype, options.input_mib) << ")\n";
        sweepCase(op.op, dtype, n, options, stream, copy);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace braze::bench

int main(int argc, char** argv) {
  const std::optional<braze::bench::SweepOptions> options = braze::bench::parseOptions(argc, argv);
  if (!options) return 2;
  try {
    return braze::bench::sweep(*options);
  } catch (const std::exception& error) {
    std::cerr << "braze_inner_outer_sweep: " << error.what() << "\n";
    return 1;
  }
}
