// Row normalizations and a row sum, each defined with the ops API as a user would (computed in
// float32, results cast back to the input dtype), run through FusionExecutorCache::run as users
// call Braze (scheduler chosen and fusion segmented automatically) and timed against the
// device's copy bandwidth in the same run. The scheduler each is expected to run as (one kernel;
// the norms' long rows on sm_90 and newer as braze::tma_ws_normalization where it measured
// faster, normalization_cases.h):
//
//   softmax_fwd     x -> y                                   (braze::inner_outer)
//   softmax_bwd     dy, y -> dx                              (braze::inner_outer)
//   layer_norm_fwd  x, weight, bias -> y, mean, rstd         (braze::inner_outer)
//   layer_norm_bwd  dy, x, mean, rstd, weight -> dx, dw, db  (braze::inner_outer)
//   rms_norm_fwd    x, weight -> y, rstd                     (braze::inner_outer)
//   rms_norm_bwd    dy, x, rstd, weight -> dx, dw            (braze::inner_outer)
//   row_sum         x -> sum over the row                    (braze::reduction)
//
// for dtype in {bf16, fp32} and row length N in {256, ..., 262144}, with M rows so that one
// M x N input holds at least 256 MiB (--input_mib=MIB changes that). Benchmark names are
// "<op>/<dtype>/<N>/..." (Google Benchmark appends "iterations:7/manual_time"), e.g.
// --benchmark_filter='softmax_fwd/bf16/4096/'. Flags:
//   --direct          adds "<op>/<dtype>/<N>/direct" after each case: the direct path, the
//                     expected scheduler forced by name through the registry and the kernel
//                     launched by its KernelExecutor into outputs allocated once (the two paths
//                     compared in one run)
//   --pipeline_check  adds scale_bias (x * weight + bias, braze::pointwise) to check the
//                     pipeline end to end
//   --ptx_only        (with --direct) hands each direct kernel to the driver as PTX (its own
//                     ptxas compiles it at load) instead of NVRTC's cubin; the executor cache
//                     always loads cubins
//   --cache_dir=DIR   compiles through the persistent cache in DIR (kernels and decisions): a
//                     second run with the same DIR restores every runtime and calls no NVRTC
//   --compile_only    segments, schedules and compiles every case without timing it (on a
//                     machine without a GPU too, for sm_90): a FusionKernelRuntime built
//                     directly for host tensors of the case's sizes (HostTensor::empty leaves
//                     them uninitialized, so their up to 2 x 256 MiB are never touched, and the
//                     reference evaluator never runs); the direct cases schedule by name
//
// Each case reports, besides the time: `bytes` (every input read once plus every output
// written once), `GB/s` and `of_copy` from the median sample, `median_us`, `host_us` (host
// time per FusionExecutorCache::run while enqueuing, or per KernelExecutor::run for a direct
// case), `M`, `N`, `compile_s` (the runtime's compileSeconds: scheduling, code generation and
// NVRTC of every segment; a direct case's includes choosing the params), and the schedulers'
// summary as label (runtime_case.h). A runtime case also reports `segments` and `kernels`
// (launched per run), and, when it runs as one kernel, `expected_scheduler` (1: the op's
// expected scheduler took it; 0: another did, which its label says).
// A case that no scheduler takes (whole, or in segments) or whose forced scheduler refuses it
// is reported as an error with the runtime's or registry's message (with each scheduler's
// reason); so is every case without a GPU.
//
// BRAZE_DUMP (segments, host_ir, scheduled, lowering, cuda_kernel, ptx, compile_log,
// launch_params) prints what each case's pipeline produced.
//
// Each case: inputs filled with uniform random values on the device; the fusion run once
// through a new FusionExecutorCache on the benchmark's stream (runtime_case.h: the run that
// compiles, on a poisoned pool), or, for a direct case, scheduled by name, compiled and
// launched once into poisoned outputs (scheduled_case.h); its results on the first rows checked
// against the reference evaluator (a wrong kernel gets no number); then timed as in
// bandwidth_timing.h: two untimed calls, then kSamples samples of kLaunchesPerSample calls.
// A runtime case's timed calls are cache hits that allocate their outputs from the pool and
// drop them; nothing in between waits for the device.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "braze/driver/device_properties.h"
#include "braze/eval/host_tensor.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"
#include "normalization_cases.h"
#include "runtime_case.h"
#include "scheduled_case.h"

namespace braze {
namespace {

using namespace bench;  // the cases (normalization_cases.h)

constexpr int kSamples = 7;
/// This program's own flags, read once in main.
struct Options {
  int64_t input_mib = 256;      ///< --input_mib=MIB: one M x N input holds at least this much
  bool pipeline_check = false;  ///< --pipeline_check: add the scale_bias cases
  bool compile_only = false;    ///< --compile_only: schedule and compile, time nothing
  bool direct = false;          ///< --direct: add each case on the direct path
  bool ptx_only = false;        ///< --ptx_only: the driver compiles each direct kernel's PTX
};

/// One benchmark case.
struct CaseSpec {
  std::string name;  ///< "<op>/<dtype>/<N>", "<op>/<dtype>/<N>/direct"
  const OpInfo* op;
  DataType dtype;
  int64_t m;
  int64_t n;
  bool direct;  ///< scheduled by name and launched by its KernelExecutor
  bool compile_only;
  bool ptx_only;
};

// ---- running a case

// BRAZE_DUMP, read once: this program is the edge.
const DumpOptions& dumpOptions() {
  static const DumpOptions dump = DumpOptions::fromEnvironment();
  return dump;
}

/// Whether the op's expected scheduler (or its alternative) took the whole fusion as one
/// kernel; nullopt when the fusion runs as several segments.
std::optional<bool> isExpectedScheduler(const FusionKernelRuntime& runtime, const OpInfo& op) {
  if (runtime.kernels().size() != 1) return std::nullopt;
  const std::string& id = runtime.kernels()[0].choice.scheduler->id;
  return id == op.scheduler || (op.alternative != nullptr && id == op.alternative);
}

/// The label of a runtime case: its segments' schedulers and params, and the op's expected
/// scheduler when another one took the whole fusion.
std::string runtimeLabel(const FusionKernelRuntime& runtime, const OpInfo& op) {
  std::string label = bench::runtimeSummary(runtime);
  if (isExpectedScheduler(runtime, op) == std::optional<bool>(false))
    label += " (expected " + std::string(op.scheduler) + ")";
  return label;
}

/// A case prepared and checked once; repetitions of the benchmark reuse it.
struct PreparedCase {
  std::string name;
  std::string error;  ///< why the case cannot run: scheduling, compilation or a wrong result
  std::optional<bench::RuntimeCase> runtime;
  std::optional<bench::ScheduledCase> direct;
};

/// The case `spec`, prepared on first use; the previous case's memory is released first.
PreparedCase& preparedCase(const CaseSpec& spec, CUstream stream) {
  static std::unique_ptr<PreparedCase> current;
  if (current && current->name == spec.name) return *current;
  current.reset();
  current = std::make_unique<PreparedCase>();
  current->name = spec.name;
  const std::unique_ptr<Fusion> fusion = defineFusion(spec.op->op, spec.dtype);
  const std::vector<bench::InputSpec> inputs = inputsOf(spec.op->op, spec.dtype, spec.m, spec.n);
  // A wrong kernel gets no number.
  try {
    if (spec.direct) {
      CompileOptions options;
      options.ptx_only = spec.ptx_only;
      bench::ScheduledCase& c = current->direct.emplace(
          bench::scheduleCase(*fusion, inputs, spec.op->scheduler, stream, dumpOptions(), options));
      c.launch(stream);
      BRAZE_CU(streamSynchronize, stream);
      current->error =
          checkLeadingRows(spec.op->op, spec.dtype, bench::deviceTensorsOf(c.inputs), c.outputs);
    } else {
      bench::RuntimeCase& c =
          current->runtime.emplace(bench::runtimeCase(*fusion, inputs, stream, dumpOptions()));
      current->error = checkLeadingRows(spec.op->op, spec.dtype, bench::deviceTensorsOf(c.inputs),
                                        c.first_outputs);
      c.first_outputs.clear();
    }
  } catch (const std::exception& error) {
    current->error = error.what();
  }
  if (!current->error.empty()) {
    current->runtime.reset();
    current->direct.reset();
  }
  return *current;
}

/// What --compile_only reports as a case's error, since nothing is timed.
std::string compileOnlyMessage(const CompiledKernel& compiled, double seconds,
                               const std::string& registers, const std::string& label) {
  return "not timed (--compile_only): compiled for " + compiled.arch().toString() + " in " +
         std::to_string(seconds) + " s" + (registers.empty() ? "" : ", " + registers) + "; " +
         label;
}

/// "<r> registers" for each kernel that reports it, joined with "/".
std::string registersOf(const std::vector<const CompiledKernel*>& kernels) {
  std::string text;
  for (const CompiledKernel* kernel : kernels) {
    if (!kernel->resources().reported) continue;
    text += (text.empty() ? "" : "/") + std::to_string(kernel->resources().registers);
  }
  return text.empty() ? text : text + " registers";
}

// --compile_only: segments, schedules and compiles for contiguous inputs of the case's sizes,
// as FusionExecutorCache would for them, on this GPU, or an H100 when there is none (for sm_90).
void compileOnly(benchmark::State& state, const CaseSpec& spec) {
  const std::unique_ptr<Fusion> fusion = defineFusion(spec.op->op, spec.dtype);
  std::vector<FusionArgument> arguments;
  for (const bench::InputSpec& input : inputsOf(spec.op->op, spec.dtype, spec.m, spec.n)) {
    arguments.emplace_back(HostTensor::empty(input.dtype, input.sizes));  // never touched
  }
  RuntimeOptions options;
  options.dump = dumpOptions();
  const FusionKernelRuntime runtime(*fusion, bench::benchmarkRegistry(),
                                    RunContext::of(*fusion, arguments), options);
  std::vector<const CompiledKernel*> kernels;
  for (const FusionKernelRuntime::SegmentKernel& kernel : runtime.kernels())
    kernels.push_back(&kernel.executor->compiledKernel());
  const std::string message =
      compileOnlyMessage(*kernels.front(), runtime.compileSeconds(), registersOf(kernels),
                         runtimeLabel(runtime, *spec.op));
  state.SkipWithError(message.c_str());
}

// --compile_only of a direct case: schedules by name for contiguous, 256-byte aligned inputs
// (what the timed run allocates) on this GPU, or an H100 when there is none, and compiles (for
// sm_90 without a GPU).
void compileOnlyDirect(benchmark::State& state, const CaseSpec& spec) {
  std::string no_gpu;
  const bool has_gpu = driver::isDriverAvailable(&no_gpu);
  SchedulerRuntimeInfo info;
  info.device = has_gpu ? driver::deviceProperties(0) : driver::h100Properties();
  for (const bench::InputSpec& input : inputsOf(spec.op->op, spec.dtype, spec.m, spec.n)) {
    TensorArgumentInfo tensor;
    tensor.dtype = input.dtype;
    tensor.sizes = input.sizes;
    tensor.strides.assign(input.sizes.size(), 1);
    for (size_t d = input.sizes.size(); d-- > 1;) {
      tensor.strides[d - 1] = tensor.strides[d] * input.sizes[d];
    }
    tensor.description = std::string(toString(input.dtype)) + " input";
    info.arguments.emplace_back(std::move(tensor));
    info.data_alignments.push_back(256);
  }
  CompileOptions options;
  options.ptx_only = spec.ptx_only;
  if (!has_gpu) options.arch = driver::GpuArch{9, 0, false};
  const bench::CompiledFusion compiled = bench::scheduleAndCompile(
      *defineFusion(spec.op->op, spec.dtype), info, spec.op->scheduler, options, dumpOptions());
  const std::string message = compileOnlyMessage(
      compiled.compiled, compiled.seconds, registersOf({&compiled.compiled}), compiled.summary);
  state.SkipWithError(message.c_str());
}

void runCase(benchmark::State& state, const CaseSpec& spec) {
  if (spec.compile_only) {
    bench::guarded(state, [&] {
      if (spec.direct) {
        compileOnlyDirect(state, spec);
      } else {
        compileOnly(state, spec);
      }
    });
    return;
  }
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  bench::guarded(state, [&] {
    PreparedCase& c = preparedCase(spec, stream);
    if (!c.error.empty()) {
      state.SkipWithError(c.error.c_str());
      return;
    }
    if (spec.direct) {
      bench::timeCase(state, *c.direct, stream);
    } else {
      bench::timeRuntimeCase(state, *c.runtime, stream);
      const std::shared_ptr<const FusionKernelRuntime> runtime = c.runtime->cache->lastRuntime();
      state.SetLabel(runtimeLabel(*runtime, *spec.op));
      if (const std::optional<bool> expected = isExpectedScheduler(*runtime, *spec.op))
        state.counters["expected_scheduler"] = *expected ? 1.0 : 0.0;
    }
    state.counters["M"] = static_cast<double>(spec.m);
    state.counters["N"] = static_cast<double>(spec.n);
  });
}

void copyReference(benchmark::State& state) {
  CUstream stream = bench::benchmarkStream(state);
  if (stream == nullptr) return;
  bench::guarded(state, [&] {
    // The reference itself, as the other cases see it.
    const std::vector<double>& samples = bench::copyReferenceSamples(stream);
    size_t next = 0;
    for (auto _ : state) state.SetIterationTime(samples[next++ % samples.size()]);
    const double median = bench::median(samples);
    bench::reportBandwidth(state, stream, 2 * bench::kCopyBytes, median);
    state.counters["median_us"] = median * 1e6;
    state.counters["bytes"] = static_cast<double>(2 * bench::kCopyBytes);
  });
}

void registerCase(const CaseSpec& spec) {
  benchmark::RegisterBenchmark(spec.name.c_str(),
                               [spec](benchmark::State& state) { runCase(state, spec); })
      ->UseManualTime()
      ->Iterations(kSamples)
      ->Unit(benchmark::kMicrosecond);
}

void registerBenchmarks(const Options& options) {
  // The copy first: the other cases report their bandwidth as a fraction of it.
  if (!options.compile_only) {
    benchmark::RegisterBenchmark("memcpy_dtod/256MiB", copyReference)
        ->UseManualTime()
        ->Iterations(bench::kCopySamples)
        ->Unit(benchmark::kMicrosecond);
  }
  std::vector<const OpInfo*> ops;
  for (const OpInfo& op : kOps) ops.push_back(&op);
  if (options.pipeline_check) ops.push_back(&kPipelineCheck);
  for (const OpInfo* op : ops) {
    for (const DataType dtype : kDtypes) {
      for (const int64_t n : kRowLengths) {
        CaseSpec spec{.name = std::string(op->name) + "/" + std::string(shortName(dtype)) + "/" +
                              std::to_string(n),
                      .op = op,
                      .dtype = dtype,
                      .m = rowsFor(n, dtype, options.input_mib),
                      .n = n,
                      .direct = false,
                      .compile_only = options.compile_only,
                      .ptx_only = false};
        registerCase(spec);
        if (options.direct) {
          spec.name += "/direct";
          spec.direct = true;
          spec.ptx_only = options.ptx_only;
          registerCase(spec);
        }
      }
    }
  }
}

// Takes this program's own flags out of argv before Google Benchmark sees it.
bool parseOwnFlags(int& argc, char** argv, Options& options) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    constexpr std::string_view kInputMib = "--input_mib=";
    if (arg == "--pipeline_check") {
      options.pipeline_check = true;
      continue;
    }
    if (arg == "--compile_only") {
      options.compile_only = true;
      continue;
    }
    if (arg == "--ptx_only") {
      options.ptx_only = true;
      continue;
    }
    if (arg == "--direct") {
      options.direct = true;
      continue;
    }
    constexpr std::string_view kCacheDir = "--cache_dir=";
    if (arg.starts_with(kCacheDir)) {
      // Kernels and decisions kept in (and taken from) this folder, as a user's process with
      // the persistent cache on: how cold and warm first runs compare.
      serde::CacheOptions cache;
      cache.directory = std::string(arg.substr(kCacheDir.size()));
      cache.log = &std::cerr;
      setDefaultKernelStore(std::make_shared<serde::KernelCache>(cache));
      setDefaultDecisionStore(std::make_shared<serde::RuntimeCache>(cache));
      continue;
    }
    if (arg.starts_with(kInputMib)) {
      options.input_mib = std::atoll(argv[i] + kInputMib.size());
      if (options.input_mib <= 0) {
        std::cerr << "braze_normalization_benchmark: --input_mib needs a positive number of MiB, "
                     "got '"
                  << arg.substr(kInputMib.size()) << "'\n";
        return false;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  if (options.ptx_only && !options.direct) {
    std::cerr << "braze_normalization_benchmark: --ptx_only applies to the direct cases "
                 "(FusionExecutorCache always loads cubins); add --direct\n";
    return false;
  }
  return true;
}

}  // namespace
}  // namespace braze

int main(int argc, char** argv) {
  braze::Options options;
  if (!braze::parseOwnFlags(argc, argv, options)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  braze::registerBenchmarks(options);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
