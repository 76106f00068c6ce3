// Row normalizations and a row sum, each defined with the ops API as a user would (computed in
// float32, results cast back to the input dtype), scheduled by name through the scheduler
// registry, compiled and timed against the device's copy bandwidth in the same run:
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
// --benchmark_filter='softmax_fwd/bf16/4096/'. --pipeline_check adds scale_bias (x * weight +
// bias, braze::pointwise) to check the pipeline end to end; --ptx_only hands each kernel to the
// driver as PTX (its own ptxas compiles it at load) instead of NVRTC's cubin; --compile_only
// schedules and compiles every case without timing it (on a machine without a GPU too, for
// sm_90).
//
// Each case reports, besides the time: `bytes` (every input read once plus every output
// written once), `GB/s` and `of_copy` from the median sample, `median_us`, `host_us` (host
// time per KernelExecutor::run while enqueuing), `M`, `N`, `compile_s` (scheduling, code
// generation and NVRTC), and the scheduler's summary as label.
// A case whose scheduler is missing or refuses it is reported as an error with the
// registry's message (which holds the scheduler's reason); so is every case without a GPU.
//
// BRAZE_DUMP (scheduled, lowering, cuda_kernel, ptx, compile_log, launch_params) prints what
// each case's pipeline produced.
//
// Each case (scheduled_case.h): inputs filled with uniform random values on the device, the
// fusion scheduled by name, compiled, run once and its results on the first rows checked
// against the reference evaluator (a wrong kernel gets no number); then timed as in
// bandwidth_timing.h: two untimed launches, then kSamples samples.

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
#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/ops/shape.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/runtime/device_tensor.h"
#include "braze/runtime/dump_options.h"
#include "normalization_cases.h"
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
  bool ptx_only = false;        ///< --ptx_only: the driver compiles each kernel's PTX
};

/// One benchmark case.
struct CaseSpec {
  std::string name;  ///< "<op>/<dtype>/<N>"
  const OpInfo* op;
  DataType dtype;
  int64_t m;
  int64_t n;
  bool compile_only;
  bool ptx_only;
};

// ---- running a case

// BRAZE_DUMP, read once: this program is the edge.
const DumpOptions& dumpOptions() {
  static const DumpOptions dump = DumpOptions::fromEnvironment();
  return dump;
}

/// A case scheduled, compiled and checked once; repetitions of the benchmark reuse it.
struct PreparedCase {
  std::string name;
  std::string error;  ///< why the case cannot run: scheduling, compilation or a wrong result
  std::optional<bench::ScheduledCase> scheduled;
};

/// The case `spec`, prepared on first use; the previous case's memory is released first.
PreparedCase& preparedCase(const CaseSpec& spec, CUstream stream) {
  static std::unique_ptr<PreparedCase> current;
  if (current && current->name == spec.name) return *current;
  current.reset();
  current = std::make_unique<PreparedCase>();
  current->name = spec.name;
  try {
    bench::ScheduledCase& c = current->scheduled.emplace(bench::scheduleCase(
        *defineFusion(spec.op->op, spec.dtype), inputsOf(spec.op->op, spec.dtype, spec.m, spec.n),
        spec.op->scheduler, stream, dumpOptions(), CompileOptions{.ptx_only = spec.ptx_only}));
    // A wrong kernel gets no number.
    c.launch(stream);
    BRAZE_CU(streamSynchronize, stream);
    current->error = checkLeadingRows(spec.op->op, spec.dtype, c);
  } catch (const std::exception& error) {
    current->error = error.what();
  }
  if (!current->error.empty()) current->scheduled.reset();
  return *current;
}

// --compile_only: schedules for contiguous, 256-byte aligned inputs (what the timed run
// allocates) on this GPU, or an H100 when there is none, and compiles (for sm_90 without a
// GPU); reports the outcome as the case's error, since nothing is timed.
void compileOnly(benchmark::State& state, const CaseSpec& spec) {
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
  if (!has_gpu) options.arch = driver::GpuArch{9, 0, false};
  const bench::CompiledFusion compiled = bench::scheduleAndCompile(
      *defineFusion(spec.op->op, spec.dtype), info, spec.op->scheduler, options, dumpOptions());
  const KernelResources& resources = compiled.compiled.resources();
  const std::string message =
      "not timed (--compile_only): compiled for " + compiled.compiled.arch().toString() + " in " +
      std::to_string(compiled.seconds) + " s" +
      (resources.reported ? ", " + std::to_string(resources.registers) + " registers" : "") + "; " +
      compiled.summary;
  state.SkipWithError(message.c_str());
}

void runCase(benchmark::State& state, const CaseSpec& spec) {
  if (spec.compile_only) {
    bench::guarded(state, [&] { compileOnly(state, spec); });
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
    bench::timeCase(state, *c.scheduled, stream);
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
        const CaseSpec spec{.name = std::string(op->name) + "/" + std::string(shortName(dtype)) +
                                    "/" + std::to_string(n),
                            .op = op,
                            .dtype = dtype,
                            .m = rowsFor(n, dtype, options.input_mib),
                            .n = n,
                            .compile_only = options.compile_only,
                            .ptx_only = options.ptx_only};
        benchmark::RegisterBenchmark(spec.name.c_str(),
                                     [spec](benchmark::State& state) { runCase(state, spec); })
            ->UseManualTime()
            ->Iterations(kSamples)
            ->Unit(benchmark::kMicrosecond);
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
