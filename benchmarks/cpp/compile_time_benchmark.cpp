// Compile time of generated kernels, on the host alone (no GPU needed): the first call of a
// fusion pays for these before its kernel can launch.
//
//   pointwise      add (float32), GELU with bias (bfloat16), x * w + b (bfloat16)
//   reduction      row sum, column sum (float32)
//   normalization  softmax, layer norm and RMS norm forward and backward (bfloat16), and two
//                  kernels of braze::tma_ws_normalization's template (softmax backward at
//                  65536, layer norm backward at 16384)
//   matmul         linear at 8192^3, alone and with bias + GELU + residual fused (bfloat16;
//                  braze::matmul's kernel template, compiled for sm_90a)
//
// Each case is scheduled once by name through the scheduler registry for contiguous inputs of
// its sizes on an H100 (sm_90; scheduling is not timed), then, in every iteration, timed
// separately:
//
//   lower_ms  lowerFusion + generateCuda: kernel IR and CUDA source
//   ptx_ms    NVRTC to PTX only (CompileOptions::ptx_only: --gpu-architecture=compute_90)
//   cubin_ms  NVRTC to a cubin for sm_90, as the runtime compiles (front end, NVVM, ptxas)
//
// Each reports the minimum over its iterations (--samples, 5 by default): the build machine
// is shared, and the minimum is the figure least disturbed by other work. Also reported:
// `ptx_cpu_ms` and `cubin_cpu_ms` (the minimum CPU time of the process over the same compiles:
// NVRTC runs on the calling thread, so this leaves out the time other processes held the
// cores), `source_bytes` (the CUDA source NVRTC parses), `ptx_bytes`, `registers` (ptxas'
// report). The time of an iteration (Google Benchmark's column) is lowering plus the cubin.
//
// Flags of this program (taken out of the command line before Google Benchmark reads it):
//   --samples=N          iterations per case
//   --nvrtc_option=OPT   passed to NVRTC in both compiles (repeatable), to measure an option
//   --no_minimal         compiles without NVRTC's -minimal (CompileOptions::minimal = false)
//   --all_runtime_headers  puts every runtime header in front of each kernel, not only those
//                        it uses (sourceWithAllRuntimeHeaders)
//   --dump_dir=DIR       writes each case's source, PTX (both compiles) and cubin to DIR
//   --compare_dir=DIR    compares each case's PTX and cubin with those written to DIR by an
//                        earlier --dump_dir run; a difference is the case's error
//
// Command (reported in benchmarks/RESULTS.md):
//   braze_compile_time_benchmark --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "braze/codegen/codegen.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/reduction.h"
#include "braze/plugin/scheduler_runtime_info.h"
#include "braze/runtime/compiled_kernel.h"
#include "normalization_cases.h"
#include "pointwise_cases.h"
#include "scheduled_case.h"

namespace braze {
namespace {

/// This program's own flags, read once in main.
struct Options {
  int samples = 5;
  std::vector<std::string> nvrtc_options;
  std::string dump_dir;
  std::string compare_dir;
  bool minimal = true;
  bool all_runtime_headers = false;
};

Options& options() {
  static Options options;
  return options;
}

/// One kernel to compile: its fusion, the sizes of its inputs and the scheduler that takes it.
struct CompileCase {
  std::string name;
  std::unique_ptr<Fusion> (*define)(DataType);
  DataType dtype;
  std::vector<std::vector<int64_t>> sizes;
  const char* scheduler;
};

// The pointwise fusions take no dtype (theirs is fixed); the normalizations take it.
std::unique_ptr<Fusion> add(DataType) {
  return bench::defineAdd();
}
std::unique_ptr<Fusion> geluBias(DataType) {
  return bench::defineGeluBias();
}
std::unique_ptr<Fusion> scaleBias(DataType dtype) {
  return bench::defineFusion(bench::Op::ScaleBias, dtype);
}
std::unique_ptr<Fusion> rowSum(DataType dtype) {
  return bench::defineFusion(bench::Op::RowSum, dtype);
}
std::unique_ptr<Fusion> columnSum(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  fusion->addOutput(sum(makeSymbolicTensor(*fusion, 2, dtype), {0}));
  return fusion;
}
// Inputs are made one statement at a time: their order is the fusion's input order.
std::unique_ptr<Fusion> linearAlone(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* w = makeSymbolicTensor(*fusion, 2, dtype);
  fusion->addOutput(linear(x, w));
  return fusion;
}
std::unique_ptr<Fusion> linearBiasGeluResidual(DataType dtype) {
  auto fusion = std::make_unique<Fusion>();
  TensorView* x = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* w = makeSymbolicTensor(*fusion, 2, dtype);
  TensorView* bias = makeSymbolicTensor(*fusion, 1, dtype);
  TensorView* residual = makeSymbolicTensor(*fusion, 2, dtype);
  fusion->addOutput(add(gelu(linear(x, w, bias), GeluApproximation::Tanh), residual));
  return fusion;
}
template <bench::Op kOp>
std::unique_ptr<Fusion> normalization(DataType dtype) {
  return bench::defineFusion(kOp, dtype);
}

/// The sizes of bench::inputsOf(op) for rows of n (the rows of a 256 MiB input).
std::vector<std::vector<int64_t>> sizesOf(bench::Op op, DataType dtype, int64_t n) {
  std::vector<std::vector<int64_t>> sizes;
  for (const bench::InputSpec& input : bench::inputsOf(op, dtype, bench::rowsFor(n, dtype, 256), n))
    sizes.push_back(input.sizes);
  return sizes;
}

std::vector<CompileCase> compileCases() {
  using bench::Op;
  constexpr DataType kF32 = DataType::Float32;
  constexpr DataType kBf16 = DataType::BFloat16;
  std::vector<CompileCase> cases = {
      {"add/fp32", add, kF32, {{16384, 4096}, {16384, 4096}}, "braze::pointwise"},
      {"gelu_bias/bf16", geluBias, kBf16, {{32768, 4096}, {4096}}, "braze::pointwise"},
      {"scale_bias/bf16", scaleBias, kBf16, sizesOf(Op::ScaleBias, kBf16, 4096),
       "braze::pointwise"},
      {"row_sum/fp32", rowSum, kF32, {{16384, 4096}}, "braze::reduction"},
      {"column_sum/fp32", columnSum, kF32, {{16384, 4096}}, "braze::reduction"},
      {"linear/bf16/8192", linearAlone, kBf16, {{8192, 8192}, {8192, 8192}}, "braze::matmul"},
      {"linear_bias_gelu_residual/bf16/8192",
       linearBiasGeluResidual,
       kBf16,
       {{8192, 8192}, {8192, 8192}, {8192}, {8192, 8192}},
       "braze::matmul"},
  };
  struct Normalization {
    Op op;
    const char* name;
    std::unique_ptr<Fusion> (*define)(DataType);
  };
  const Normalization normalizations[] = {
      {Op::SoftmaxFwd, "softmax_fwd", normalization<Op::SoftmaxFwd>},
      {Op::LayerNormFwd, "layer_norm_fwd", normalization<Op::LayerNormFwd>},
      {Op::RmsNormFwd, "rms_norm_fwd", normalization<Op::RmsNormFwd>},
      {Op::SoftmaxBwd, "softmax_bwd", normalization<Op::SoftmaxBwd>},
      {Op::LayerNormBwd, "layer_norm_bwd", normalization<Op::LayerNormBwd>},
      {Op::RmsNormBwd, "rms_norm_bwd", normalization<Op::RmsNormBwd>},
  };
  for (const Normalization& n : normalizations) {
    for (const int64_t row : {1024, 4096}) {
      cases.push_back({std::string(n.name) + "/bf16/" + std::to_string(row), n.define, kBf16,
                       sizesOf(n.op, kBf16, row), "braze::inner_outer"});
    }
  }
  // braze::tma_ws_normalization's kernel template with a row program: softmax backward over a
  // cluster, layer norm backward with column sums.
  cases.push_back({"softmax_bwd/bf16/65536/tma_ws", normalization<Op::SoftmaxBwd>, kBf16,
                   sizesOf(Op::SoftmaxBwd, kBf16, 65536), "braze::tma_ws_normalization"});
  cases.push_back({"layer_norm_bwd/bf16/16384/tma_ws", normalization<Op::LayerNormBwd>, kBf16,
                   sizesOf(Op::LayerNormBwd, kBf16, 16384), "braze::tma_ws_normalization"});
  return cases;
}

// CPU time of the process: NVRTC compiles on the calling thread, so on a machine that other
// work keeps busy this is the compile's own cost, which wall time overstates.
double processCpuMilliseconds() {
  timespec time{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time);
  return static_cast<double>(time.tv_sec) * 1e3 + static_cast<double>(time.tv_nsec) / 1e6;
}

/// Wall and CPU milliseconds of one step.
struct StepTime {
  double wall_ms;
  double cpu_ms;
};

template <typename Step>
StepTime timeStep(Step&& step) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = processCpuMilliseconds();
  step();
  return {
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
      processCpuMilliseconds() - cpu_start};
}

/// The minimum of each over the samples.
struct MinTime {
  double wall_ms = std::numeric_limits<double>::infinity();
  double cpu_ms = std::numeric_limits<double>::infinity();

  void add(const StepTime& t) {
    wall_ms = std::min(wall_ms, t.wall_ms);
    cpu_ms = std::min(cpu_ms, t.cpu_ms);
  }
};

// "add/fp32" -> "add_fp32": one file name per case.
std::string fileStem(std::string name) {
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

void writeFile(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  BRAZE_USER_CHECK(file.good()) << "braze_compile_time_benchmark: could not write " << path;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  BRAZE_USER_CHECK(file.good()) << "braze_compile_time_benchmark: could not read " << path
                                << " (written by an earlier run with --dump_dir)";
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

/// What one case produced, for --dump_dir and --compare_dir.
struct CaseOutputs {
  std::string source;
  std::string ptx;       ///< of the compute_90 compile
  std::string sm90_ptx;  ///< of the sm_90 compile
  std::string cubin;
};

void dumpOutputs(const std::string& dir, const std::string& stem, const CaseOutputs& outputs) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path base = std::filesystem::path(dir) / stem;
  writeFile(base.string() + ".cu", outputs.source);
  writeFile(base.string() + ".ptx", outputs.ptx);
  writeFile(base.string() + ".sm_90.ptx", outputs.sm90_ptx);
  writeFile(base.string() + ".cubin", outputs.cubin);
}

/// The outputs that differ from those dumped to `dir` ("ptx", "sm_90 ptx", "cubin"), joined.
std::string compareOutputs(const std::string& dir, const std::string& stem,
                           const CaseOutputs& outputs) {
  const std::filesystem::path base = std::filesystem::path(dir) / stem;
  std::string differ;
  const auto check = [&](const char* what, const std::string& suffix, const std::string& now) {
    if (readFile(base.string() + suffix) != now)
      differ += (differ.empty() ? "" : ", ") + std::string(what);
  };
  check("ptx", ".ptx", outputs.ptx);
  check("sm_90 ptx", ".sm_90.ptx", outputs.sm90_ptx);
  check("cubin", ".cubin", outputs.cubin);
  return differ;
}

void runCase(benchmark::State& state, const CompileCase& c) {
  const std::unique_ptr<Fusion> fusion = c.define(c.dtype);
  const SchedulerRuntimeInfo info = contiguousRuntimeInfo(*fusion, c.sizes);
  const ScheduledFusion scheduled = bench::benchmarkRegistry().schedule(*fusion, info, c.scheduler);

  CompileOptions cubin_options;
  cubin_options.arch = driver::GpuArch{9, 0, false};
  cubin_options.extra_options = options().nvrtc_options;
  cubin_options.minimal = options().minimal;
  CompileOptions ptx_options = cubin_options;
  ptx_options.ptx_only = true;

  MinTime lower;
  MinTime to_ptx;
  MinTime to_cubin;
  CaseOutputs outputs;
  int registers = 0;
  for (auto _ : state) {
    GeneratedKernel kernel;
    const StepTime lowered = timeStep([&] {
      kernel = generateCuda(*scheduled.fusion);
      if (options().all_runtime_headers) kernel.source = sourceWithAllRuntimeHeaders(kernel);
    });
    // Kernel templates with wgmma or setmaxnreg compile for sm_90a, as the runtime does.
    cubin_options.arch->arch_specific = kernel.arch_specific;
    ptx_options.arch->arch_specific = kernel.arch_specific;
    std::optional<CompiledKernel> ptx;
    const StepTime ptx_time = timeStep(
        [&] { ptx = CompiledKernel::compile(kernel.source, kernel.kernel_name, ptx_options); });
    std::optional<CompiledKernel> cubin;
    const StepTime cubin_time = timeStep(
        [&] { cubin = CompiledKernel::compile(kernel.source, kernel.kernel_name, cubin_options); });
    state.SetIterationTime((lowered.wall_ms + cubin_time.wall_ms) / 1e3);
    lower.add(lowered);
    to_ptx.add(ptx_time);
    to_cubin.add(cubin_time);
    outputs = {kernel.source, ptx->ptx(), cubin->ptx(),
               std::string(cubin->cubin().begin(), cubin->cubin().end())};
    registers = cubin->resources().registers;
  }
  state.counters["lower_ms"] = lower.wall_ms;
  state.counters["ptx_ms"] = to_ptx.wall_ms;
  state.counters["cubin_ms"] = to_cubin.wall_ms;
  state.counters["ptx_cpu_ms"] = to_ptx.cpu_ms;
  state.counters["cubin_cpu_ms"] = to_cubin.cpu_ms;
  state.counters["source_bytes"] = static_cast<double>(outputs.source.size());
  state.counters["ptx_bytes"] = static_cast<double>(outputs.ptx.size());
  state.counters["registers"] = registers;
  state.SetLabel(bench::schedulerSummary(*scheduled.scheduler, scheduled.summary));

  const std::string stem = fileStem(c.name);
  if (!options().dump_dir.empty()) dumpOutputs(options().dump_dir, stem, outputs);
  if (!options().compare_dir.empty()) {
    const std::string differ = compareOutputs(options().compare_dir, stem, outputs);
    if (!differ.empty()) {
      const std::string message = "differs from " + options().compare_dir + ": " + differ;
      state.SkipWithError(message.c_str());
    }
  }
}

void registerBenchmarks() {
  for (CompileCase& c : compileCases()) {
    const std::string name = c.name;
    benchmark::RegisterBenchmark(
        name.c_str(),
        [c = std::make_shared<CompileCase>(std::move(c))](benchmark::State& state) {
          bench::guarded(state, [&] { runCase(state, *c); });
        })
        ->UseManualTime()
        ->Iterations(options().samples)
        ->Unit(benchmark::kMillisecond);
  }
}

// Takes this program's own flags out of argv before Google Benchmark sees it.
bool parseOwnFlags(int& argc, char** argv) {
  Options& own = options();
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&](std::string_view flag) -> std::optional<std::string> {
      if (!arg.starts_with(flag)) return std::nullopt;
      return std::string(arg.substr(flag.size()));
    };
    if (auto samples = value("--samples=")) {
      own.samples = std::atoi(samples->c_str());
      if (own.samples <= 0) {
        std::cerr << "braze_compile_time_benchmark: --samples needs a positive count, got '"
                  << *samples << "'\n";
        return false;
      }
    } else if (auto option = value("--nvrtc_option=")) {
      own.nvrtc_options.push_back(*option);
    } else if (arg == "--all_runtime_headers") {
      own.all_runtime_headers = true;
    } else if (arg == "--no_minimal") {
      own.minimal = false;
    } else if (auto dir = value("--dump_dir=")) {
      own.dump_dir = *dir;
    } else if (auto dir = value("--compare_dir=")) {
      own.compare_dir = *dir;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return true;
}

}  // namespace
}  // namespace braze

int main(int argc, char** argv) {
  if (!braze::parseOwnFlags(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  braze::registerBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
