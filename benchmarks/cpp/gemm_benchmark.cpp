// bf16 GEMM on Hopper, C [M, N] = A [M, K] * B [N, K]^T with fp32 accumulation (linear's
// layout): linear through FusionExecutorCache, which the braze::matmul scheduler runs as its
// warp-specialized kernel template (tensor maps re-addressed per run), against cuBLAS
// (cublasGemmEx, loaded at run time) in the same run, as TFLOP/s. Each shape first checks the
// result against cuBLAS on the same random inputs; a small shape with tails in M, N and K is
// checked against the CPU reference evaluator.
//
// BM_Gemm/braze_block_per_tile launches the same kernel without persistence (one block per
// tile, the scheduler's params with ctas = 0), compiled directly: what the persistent blocks
// gain, in the same run. BM_Gemm/braze_registers_store stores C from registers (the
// epilogue's own stores, MatmulParams::tma_store = 0) instead of through shared memory in bulk
// copies that overlap the next tile: what that store gains.
//
// Samples are 10 back-to-back launches with an idle gap of 20 ms before each (the median of
// 20 is reported), as benchmarks/python/gemm_torch.py times PyTorch.
//
// BM_GemmUnaligned is linear with K not a multiple of 8 (rows off 16-byte boundaries): Braze
// runs it as two copy kernels that pad K and the GEMM, cuBLAS as it is.
//
// BM_GemmMatmul is matmul(a [M, K], b [K, N]) with both row-major (torch.matmul's layout: B is
// read N-major and transposed by wgmma) against cuBLAS on the same layout.
//
// BM_GemmEpilogue times linear with bias and GELU (tanh), optionally plus a residual, fused
// into the GEMM by braze::matmul, against cuBLAS's GEMM followed by a separate kernel for the
// epilogue (Braze's pointwise kernel reading the GEMM's result, the bias and the residual).
// Its TFLOP/s count the GEMM's flops only, so they compare directly with BM_Gemm's.
//
// BM_GemmPrologue times linear(x.to(bf16), w[.to(bf16)]) with fp32 x (and w): braze_fused is
// one braze::matmul kernel that converts the fp32 tiles in shared memory; braze_cast_then_gemm
// and cublas_cast_then_gemm first cast with Braze's pointwise kernel (fp32 read, bf16 written)
// and then run Braze's or cuBLAS's bf16 GEMM. Floor of the cast at 8192^2 fp32: 402 MB moved,
// about 0.1 ms at 4 TB/s, 7% of the GEMM's 1.4 ms.
//
//   braze_gemm_benchmark [--benchmark_filter=...]
//
// Floor at 8192^3: 2 * 8192^3 = 1.1e12 flops; at the H100 SXM's dense bf16 peak (989 TFLOP/s)
// 1.11 ms, and cuBLAS reaches about 700-750 TFLOP/s there.

#include <dlfcn.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "bandwidth_timing.h"
#include "braze/codegen/codegen.h"
#include "braze/driver/device_properties.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/ops/contraction.h"
#include "braze/ops/elementwise.h"
#include "braze/ops/shape.h"
#include "braze/runtime/compiled_kernel.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/kernel_executor.h"
#include "gemm_template.h"
#include "matmul_scheduler.h"
#include "random_fill.h"

namespace braze::bench {
namespace {

// The few cuBLAS entries used, resolved from libcublas.so.13 (absent: cuBLAS rows skip).
struct Cublas {
  using Handle = void*;
  int (*create)(Handle*) = nullptr;
  int (*setStream)(Handle, CUstream) = nullptr;
  int (*gemmEx)(Handle, int, int, int, int, int, const void*, const void*, int, int, const void*,
                int, int, const void*, void*, int, int, int, int) = nullptr;
  Handle handle = nullptr;

  static Cublas* get() {
    static Cublas* loaded = [] {
      void* library = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
      if (library == nullptr) return static_cast<Cublas*>(nullptr);
      auto* api = new Cublas;
      api->create = reinterpret_cast<decltype(api->create)>(dlsym(library, "cublasCreate_v2"));
      api->setStream =
          reinterpret_cast<decltype(api->setStream)>(dlsym(library, "cublasSetStream_v2"));
      api->gemmEx = reinterpret_cast<decltype(api->gemmEx)>(dlsym(library, "cublasGemmEx"));
      if (!api->create || !api->setStream || !api->gemmEx || api->create(&api->handle) != 0)
        return static_cast<Cublas*>(nullptr);
      return api;
    }();
    return loaded;
  }

  // Row-major C [M, N] = A [M, K] * B [N, K]^T is column-major C^T = B^T(op T of B's K x N) * A;
  // with `b_k_by_n` (B [K, N] row-major, matmul's layout) B's column-major view is used as is.
  void gemm(const DeviceTensor& a, const DeviceTensor& b, const DeviceTensor& c, CUstream stream,
            bool b_k_by_n = false) {
    constexpr int kOpN = 0, kOpT = 1, kBf16 = 14, kCompute32F = 68, kDefaultAlgo = -1;
    const int m = static_cast<int>(a.sizes()[0]);
    const int k = static_cast<int>(a.sizes()[1]);
    const int n = static_cast<int>(b.sizes()[b_k_by_n ? 1 : 0]);
    const float alpha = 1.0f, beta = 0.0f;
    setStream(handle, stream);
    const int status =
        gemmEx(handle, b_k_by_n ? kOpN : kOpT, kOpN, n, m, k, &alpha,
               reinterpret_cast<const void*>(b.data()), kBf16, b_k_by_n ? n : k,
               reinterpret_cast<const void*>(a.data()), kBf16, k, &beta,
               reinterpret_cast<void*>(c.data()), kBf16, n, kCompute32F, kDefaultAlgo);
    BRAZE_USER_CHECK(status == 0) << "cublasGemmEx failed with status " << status;
  }
};

std::unique_ptr<Fusion> linearFusion() {
  auto fusion = std::make_unique<Fusion>();
  TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
  fusion->addOutput(linear(a, b));
  return fusion;
}

FusionExecutorCache& gemmCache() {
  static FusionExecutorCache cache(linearFusion());
  return cache;
}

// matmul(a [M, K], b [K, N]), both row-major: torch.matmul's layout, B read N-major.
FusionExecutorCache& matmulCache() {
  static FusionExecutorCache cache = [] {
    auto fusion = std::make_unique<Fusion>();
    TensorView* a = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* b = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    fusion->addOutput(matmul(a, b));
    return FusionExecutorCache(std::move(fusion));
  }();
  return cache;
}

// The epilogue after the GEMM: gelu(y + bias) [+ residual], y's dtype throughout.
TensorView* epilogueOf(Fusion& fusion, TensorView* y, TensorView* bias, bool residual) {
  TensorView* out = gelu(add(y, broadcast(bias, {true, false})), GeluApproximation::Tanh);
  if (residual) out = add(out, makeSymbolicTensor(fusion, 2, DataType::BFloat16));
  return out;
}

// Fused: linear(x, w) then the epilogue, in one fusion (braze::matmul fuses it), inputs x, w,
// bias [, residual]. Not fused: the epilogue alone on a GEMM's result, the separate kernel
// after cuBLAS, inputs y, bias [, residual]. Built once each.
FusionExecutorCache& epilogueFusionCache(bool fused, bool residual) {
  static std::unique_ptr<FusionExecutorCache> caches[2][2];
  std::unique_ptr<FusionExecutorCache>& cache = caches[fused][residual];
  if (cache == nullptr) {
    auto fusion = std::make_unique<Fusion>();
    TensorView* y = nullptr;
    if (fused) {
      TensorView* x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
      TensorView* w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
      y = linear(x, w);
    } else {
      y = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    }
    TensorView* bias = makeSymbolicTensor(*fusion, 1, DataType::BFloat16);
    fusion->addOutput(epilogueOf(*fusion, y, bias, residual));
    cache = std::make_unique<FusionExecutorCache>(std::move(fusion));
  }
  return *cache;
}

// The cast before the GEMM: linear(x.to(bf16), w [.to(bf16)]) in one fusion (fused), or the
// casts alone (the separate kernel before a bf16 GEMM). Built once each.
FusionExecutorCache& prologueFusionCache(bool fused, bool convert_x, bool convert_w) {
  static std::unique_ptr<FusionExecutorCache> caches[2][2][2];
  std::unique_ptr<FusionExecutorCache>& cache = caches[fused][convert_x][convert_w];
  if (cache == nullptr) {
    auto fusion = std::make_unique<Fusion>();
    // The casts alone take no bf16 operand.
    TensorView* x = nullptr;
    if (convert_x)
      x = cast(makeSymbolicTensor(*fusion, 2, DataType::Float32), DataType::BFloat16);
    else if (fused)
      x = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    TensorView* w = nullptr;
    if (convert_w)
      w = cast(makeSymbolicTensor(*fusion, 2, DataType::Float32), DataType::BFloat16);
    else if (fused)
      w = makeSymbolicTensor(*fusion, 2, DataType::BFloat16);
    if (fused) {
      fusion->addOutput(linear(x, w));
    } else {
      if (convert_x) fusion->addOutput(x);
      if (convert_w) fusion->addOutput(w);
    }
    cache = std::make_unique<FusionExecutorCache>(std::move(fusion));
  }
  return *cache;
}

// linear scheduled by braze::matmul with given params (not the heuristics'), compiled once per
// params and launched directly.
struct ForcedGemm {
  std::unique_ptr<Fusion> fusion = linearFusion();
  std::unique_ptr<KernelExecutor> executor;

  explicit ForcedGemm(const matmul_scheduler::MatmulParams& params) {
    matmul_scheduler::schedule(*fusion, params);
    GeneratedKernel kernel = generateCuda(*fusion);
    CompiledKernel compiled = CompiledKernel::compile(kernel.source, kernel.kernel_name,
                                                      {.arch = driver::GpuArch{9, 0, true}});
    executor = std::make_unique<KernelExecutor>(*fusion, std::move(kernel), std::move(compiled));
  }
  static ForcedGemm& get(const matmul_scheduler::MatmulParams& params) {
    static std::map<std::string, std::unique_ptr<ForcedGemm>> compiled;
    std::unique_ptr<ForcedGemm>& gemm = compiled[matmul_scheduler::toString(params)];
    if (!gemm) gemm = std::make_unique<ForcedGemm>(params);
    return *gemm;
  }
};

bool onHopper(benchmark::State& state) {
  if (benchmarkStream(state) == nullptr) return false;
  if (driver::deviceProperties(0).arch.major != 9) {
    state.SkipWithError("the kernel is for sm_90a");
    return false;
  }
  return true;
}

double maxAbs(const std::vector<double>& values) {
  double m = 0;
  for (double v : values) m = std::max(m, std::abs(v));
  return m;
}

std::vector<double> valuesOf(const DeviceTensor& tensor) {
  const HostTensor host = tensor.toHost();
  std::vector<double> values(static_cast<size_t>(host.numel()));
  for (int64_t i = 0; i < host.numel(); ++i)
    values[static_cast<size_t>(i)] = toDouble(host.atFlat(i));
  return values;
}

// The largest difference between two results, relative to the largest magnitude.
double relativeDifference(const std::vector<double>& x, const std::vector<double>& y) {
  double diff = 0;
  for (size_t i = 0; i < x.size(); ++i) diff = std::max(diff, std::abs(x[i] - y[i]));
  return diff / std::max(maxAbs(y), 1e-30);
}

// Records the result's difference from cuBLAS's; false (the row skipped) when beyond `limit`.
bool agreesWithCublas(benchmark::State& state, CUstream stream, const DeviceTensor& result,
                      const DeviceTensor& cublas_result, double limit) {
  BRAZE_CU(streamSynchronize, stream);
  const double difference = relativeDifference(valuesOf(result), valuesOf(cublas_result));
  state.counters["rel_diff_vs_cublas"] = difference;
  if (difference < limit) return true;
  state.SkipWithError(("differs from cuBLAS by " + std::to_string(difference)).c_str());
  return false;
}

// Times `launch` once per iteration with events; TFLOP/s of the state's M x N x K GEMM at the
// median time.
template <typename Launch>
void timeGemm(benchmark::State& state, CUstream stream, Launch&& launch) {
  EventTimer timer(stream);
  std::vector<double> samples;
  for (auto _ : state) {
    // An idle gap before every sample: under back-to-back load the GPU lowers its clock for
    // power, and whichever kernel ran later would be measured slower.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double seconds = timer.time(launch);
    samples.push_back(seconds);
    state.SetIterationTime(seconds);
  }
  const double flops = 2.0 * static_cast<double>(state.range(0)) *
                       static_cast<double>(state.range(1)) * static_cast<double>(state.range(2));
  state.counters["TFLOPs"] = flops / median(samples) / 1e12;
}

// cuBLAS, or null with the row skipped when it cannot be loaded.
Cublas* cublasOrSkip(benchmark::State& state) {
  Cublas* cublas = Cublas::get();
  if (cublas == nullptr) state.SkipWithError("libcublas.so.13 is not loadable");
  return cublas;
}

enum class GemmKind { Braze, BrazeForced, Cublas, BrazeMatmul, CublasMatmul };

void BM_Gemm(benchmark::State& state, GemmKind kind, matmul_scheduler::MatmulParams forced = {}) {
  const bool braze_kernel = kind != GemmKind::Cublas && kind != GemmKind::CublasMatmul;
  const bool k_by_n = kind == GemmKind::BrazeMatmul || kind == GemmKind::CublasMatmul;
  if (!onHopper(state)) return;
  CUstream stream = benchmarkStream(state);
  guarded(state, [&] {
    const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
    const DeviceTensor a = DeviceTensor::empty(DataType::BFloat16, {m, k});
    const DeviceTensor b =
        DeviceTensor::empty(DataType::BFloat16, k_by_n ? std::vector{k, n} : std::vector{n, k});
    fillUniform(a, -1.0f, 1.0f, 1, stream);
    fillUniform(b, -1.0f, 1.0f, 2, stream);
    Cublas* cublas = Cublas::get();
    FusionExecutorCache& cache = k_by_n ? matmulCache() : gemmCache();
    const std::vector<FusionArgument> inputs = {a, b};
    RunOptions options;
    options.stream = stream;
    DeviceTensor c = DeviceTensor::empty(DataType::BFloat16, {m, n});
    auto launch = [&] {
      if (kind == GemmKind::Braze || kind == GemmKind::BrazeMatmul) {
        c = std::get<DeviceTensor>(cache.run(inputs, options)[0]);
      } else if (kind == GemmKind::BrazeForced) {
        // Into the preallocated result: the executor allocates outputs it is not given.
        ForcedGemm::get(forced).executor->run({a, b}, stream, {c});
      } else {
        cublas->gemm(a, b, c, stream, k_by_n);
      }
    };
    if (!braze_kernel && cublas == nullptr) {
      state.SkipWithError("libcublas.so.13 is not loadable");
      return;
    }
    if (braze_kernel && cublas != nullptr) {
      // Checked against cuBLAS on the same inputs before it is timed.
      const DeviceTensor expected = DeviceTensor::empty(DataType::BFloat16, {m, n});
      launch();
      const std::string described =
          kind != GemmKind::BrazeForced ? cache.lastRuntime()->describe() : "braze::matmul";
      if (described.find("braze::matmul") == std::string::npos) {
        state.SkipWithError(("not run by braze::matmul: " + described).c_str());
        return;
      }
      cublas->gemm(a, b, expected, stream, k_by_n);
      if (!agreesWithCublas(state, stream, c, expected, 1e-2)) return;
    }
    timeGemm(state, stream, launch);
  });
}

void BM_GemmEpilogue(benchmark::State& state, bool fused, bool residual) {
  if (!onHopper(state)) return;
  CUstream stream = benchmarkStream(state);
  guarded(state, [&] {
    const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
    Cublas* cublas = cublasOrSkip(state);
    if (cublas == nullptr) return;
    const DeviceTensor x = DeviceTensor::empty(DataType::BFloat16, {m, k});
    const DeviceTensor w = DeviceTensor::empty(DataType::BFloat16, {n, k});
    const DeviceTensor bias = DeviceTensor::empty(DataType::BFloat16, {n});
    const DeviceTensor skip = DeviceTensor::empty(DataType::BFloat16, {m, n});
    fillUniform(x, -1.0f, 1.0f, 1, stream);
    fillUniform(w, -1.0f, 1.0f, 2, stream);
    fillUniform(bias, -1.0f, 1.0f, 3, stream);
    fillUniform(skip, -1.0f, 1.0f, 4, stream);
    RunOptions options;
    options.stream = stream;
    const DeviceTensor y = DeviceTensor::empty(DataType::BFloat16, {m, n});
    std::vector<FusionArgument> fused_inputs = {x, w, bias};
    std::vector<FusionArgument> epilogue_inputs = {y, bias};
    if (residual) {
      fused_inputs.push_back(skip);
      epilogue_inputs.push_back(skip);
    }
    DeviceTensor out = y;
    const auto separate = [&] {
      cublas->gemm(x, w, y, stream);
      return std::get<DeviceTensor>(
          epilogueFusionCache(false, residual).run(epilogue_inputs, options)[0]);
    };
    const auto launch = [&] {
      out = fused ? std::get<DeviceTensor>(
                        epilogueFusionCache(true, residual).run(fused_inputs, options)[0])
                  : separate();
    };
    launch();
    if (fused) {
      const std::string described = epilogueFusionCache(true, residual).lastRuntime()->describe();
      if (described.find("braze::matmul") == std::string::npos ||
          described.find("braze::pointwise") != std::string::npos) {
        state.SkipWithError(("not one braze::matmul kernel: " + described).c_str());
        return;
      }
      // Checked against cuBLAS and the separate epilogue on the same inputs before it is timed.
      if (!agreesWithCublas(state, stream, out, separate(), 2e-2)) return;
    }
    timeGemm(state, stream, launch);
  });
}

enum class PrologueKind { BrazeFused, BrazeCastThenGemm, CastThenCublas };

void BM_GemmPrologue(benchmark::State& state, PrologueKind kind, bool convert_x, bool convert_w) {
  if (!onHopper(state)) return;
  CUstream stream = benchmarkStream(state);
  guarded(state, [&] {
    const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
    Cublas* cublas = cublasOrSkip(state);
    if (cublas == nullptr) return;
    const DeviceTensor x =
        DeviceTensor::empty(convert_x ? DataType::Float32 : DataType::BFloat16, {m, k});
    const DeviceTensor w =
        DeviceTensor::empty(convert_w ? DataType::Float32 : DataType::BFloat16, {n, k});
    fillUniform(x, -1.0f, 1.0f, 1, stream);
    fillUniform(w, -1.0f, 1.0f, 2, stream);
    RunOptions options;
    options.stream = stream;
    const std::vector<FusionArgument> inputs = {x, w};
    DeviceTensor out = DeviceTensor::empty(DataType::BFloat16, {m, n});
    const auto separate = [&](bool with_cublas) {
      std::vector<FusionArgument> fp32;
      if (convert_x) fp32.push_back(x);
      if (convert_w) fp32.push_back(w);
      const std::vector<FusionArgument> cast =
          prologueFusionCache(false, convert_x, convert_w).run(fp32, options);
      const DeviceTensor x16 = convert_x ? std::get<DeviceTensor>(cast[0]) : x;
      const DeviceTensor w16 = convert_w ? std::get<DeviceTensor>(cast.back()) : w;
      if (with_cublas) {
        cublas->gemm(x16, w16, out, stream);
        return out;
      }
      return std::get<DeviceTensor>(gemmCache().run({x16, w16}, options)[0]);
    };
    FusionExecutorCache& fused_cache = prologueFusionCache(true, convert_x, convert_w);
    const auto launch = [&] {
      if (kind == PrologueKind::BrazeFused)
        out = std::get<DeviceTensor>(fused_cache.run(inputs, options)[0]);
      else
        out = separate(kind == PrologueKind::CastThenCublas);
    };
    launch();
    if (kind == PrologueKind::BrazeFused) {
      const std::string described = fused_cache.lastRuntime()->describe();
      if (described.find("braze::matmul") == std::string::npos ||
          described.find("braze::pointwise") != std::string::npos) {
        state.SkipWithError(("not one braze::matmul kernel: " + described).c_str());
        return;
      }
      const DeviceTensor fused = out;
      if (!agreesWithCublas(state, stream, fused, separate(true), 1e-2)) return;
    }
    timeGemm(state, stream, launch);
  });
}

// Tails in every dim, against the CPU reference evaluator.
void BM_GemmCheck(benchmark::State& state) {
  if (!onHopper(state)) return;
  guarded(state, [&] {
    const int64_t m = 200, n = 328, k = 136;
    HostTensor a = HostTensor::empty(DataType::BFloat16, {m, k});
    HostTensor b = HostTensor::empty(DataType::BFloat16, {n, k});
    for (int64_t i = 0; i < a.numel(); ++i) a.setFlat(i, std::sin(0.37 * static_cast<double>(i)));
    for (int64_t i = 0; i < b.numel(); ++i) b.setFlat(i, std::cos(0.11 * static_cast<double>(i)));
    FusionExecutorCache& cache = gemmCache();
    const DeviceTensor c = std::get<DeviceTensor>(
        cache.run({DeviceTensor::fromHost(a), DeviceTensor::fromHost(b)})[0]);
    BRAZE_CU(ctxSynchronize);
    const HostTensor expected = evaluateFusionTensors(cache.fusion(), {a, b})[0];
    std::vector<double> want(static_cast<size_t>(expected.numel()));
    for (int64_t i = 0; i < expected.numel(); ++i)
      want[static_cast<size_t>(i)] = toDouble(expected.atFlat(i));
    const double difference = relativeDifference(valuesOf(c), want);
    state.counters["rel_diff_vs_reference"] = difference;
    if (!(difference < 1e-2)) {
      state.SkipWithError(("differs from the reference by " + std::to_string(difference)).c_str());
    }
    for (auto _ : state) {
    }
  });
}

// Each shape's Braze and cuBLAS rows run one after the other, so that both see the same
// clocks (the GPU slows down under long back-to-back load).
// 8192^3, then M in {1024, 4096, 16384} by the (N, K) of a 7B model's attention projection,
// MLP up and MLP down and of a 70B model's (Llama 2).
constexpr int64_t kShapes[][3] = {
    {8192, 8192, 8192},
    {1024, 4096, 4096},
    {1024, 11008, 4096},
    {1024, 4096, 11008},
    {1024, 8192, 8192},
    {1024, 28672, 8192},
    {1024, 8192, 28672},
    {4096, 4096, 4096},
    {4096, 11008, 4096},
    {4096, 4096, 11008},
    {4096, 8192, 8192},
    {4096, 28672, 8192},
    {4096, 8192, 28672},
    {16384, 4096, 4096},
    {16384, 11008, 4096},
    {16384, 4096, 11008},
    {16384, 8192, 8192},
    {16384, 28672, 8192},
    {16384, 8192, 28672},
    // Vocabulary projections: 32000 (stored through shared memory) and GPT-2's odd 50257 (one
    // column per epilogue call, from registers).
    {4096, 32000, 4096},
    {4096, 50257, 768},
};
// Few tiles and a long K (the heuristics split K over clusters), and torch.matmul's layout.
constexpr int64_t kSmallShapes[][3] = {{1024, 1024, 8192}, {512, 512, 16384}, {256, 512, 4096}};
// K not a multiple of 8: rows of A and B are not 16-byte aligned, so Braze copies both
// K-padded first (core/src/runtime/contraction_staging.h) and cuBLAS reads them as they are.
constexpr int64_t kUnalignedShapes[][3] = {
    {4096, 4096, 4095}, {8192, 8192, 8191}, {4096, 11008, 4100}};
// torch.matmul's layout; the last three are the shapes of the nvFuser comparison (RESULTS.md).
constexpr int64_t kMatmulShapes[][3] = {{8192, 8192, 8192},
                                        {4096, 11008, 4096},
                                        {4096, 4096, 4096},
                                        {8192, 4096, 14336},
                                        {16384, 8192, 1024}};

}  // namespace
}  // namespace braze::bench

int main(int argc, char** argv) {
  using namespace braze::bench;
  namespace matmul_scheduler = braze::matmul_scheduler;
  namespace driver = braze::driver;
  benchmark::RegisterBenchmark("BM_GemmCheck", BM_GemmCheck)->Iterations(1);
  // Every GEMM row: one shape, 20 samples timed by CUDA events, in milliseconds.
  const auto timed = [](benchmark::internal::Benchmark* bench, const int64_t(&shape)[3]) {
    bench->Args({shape[0], shape[1], shape[2]})
        ->ArgNames({"M", "N", "K"})
        ->UseManualTime()
        ->Iterations(20)
        ->Unit(benchmark::kMillisecond);
  };
  const auto add = [&](const std::string& name, GemmKind kind, const int64_t(&shape)[3],
                       matmul_scheduler::MatmulParams forced = {}) {
    timed(benchmark::RegisterBenchmark(name.c_str(), BM_Gemm, kind, forced), shape);
  };
  for (const auto& shape : kShapes) {
    add("BM_Gemm/braze", GemmKind::Braze, shape);
    add("BM_Gemm/cublas", GemmKind::Cublas, shape);
  }
  for (const auto& shape : kSmallShapes) {
    add("BM_Gemm/braze", GemmKind::Braze, shape);
    add("BM_Gemm/cublas", GemmKind::Cublas, shape);
  }
  for (const auto& shape : kUnalignedShapes) {
    add("BM_GemmUnaligned/braze_staged", GemmKind::Braze, shape);
    add("BM_GemmUnaligned/cublas", GemmKind::Cublas, shape);
  }
  for (const auto& shape : kMatmulShapes) {
    add("BM_GemmMatmul/braze", GemmKind::BrazeMatmul, shape);
    add("BM_GemmMatmul/cublas", GemmKind::CublasMatmul, shape);
  }
  // Persistence on its own: the same kernel with one block per tile.
  matmul_scheduler::MatmulParams block_per_tile;
  block_per_tile.ctas = 0;
  block_per_tile.tma_store = 1;
  add("BM_Gemm/braze_block_per_tile", GemmKind::BrazeForced, kShapes[0], block_per_tile);
  add("BM_Gemm/braze_block_per_tile", GemmKind::BrazeForced, kShapes[7], block_per_tile);
  // C stored from registers by the epilogue instead of through shared memory in bulk copies.
  matmul_scheduler::MatmulParams registers_store;
  registers_store.ctas = driver::deviceProperties(0).sm_count;
  for (const size_t i : {0, 1, 7, 8})
    add("BM_Gemm/braze_registers_store", GemmKind::BrazeForced, kShapes[i], registers_store);
  // Pairs of CTAs sharing B through multicast copies (not chosen by the heuristics: no faster).
  matmul_scheduler::MatmulParams pairs;
  pairs.cluster_m = 2;
  pairs.tma_store = 1;
  pairs.ctas = driver::deviceProperties(0).sm_count / 2 * 2;
  for (const size_t i : {0, 1, 7, 8, 16})
    add("BM_Gemm/braze_pairs_sharing_b", GemmKind::BrazeForced, kShapes[i], pairs);
  // The small shapes with other tile widths and K splits than the heuristics chose (64 wide
  // without a split is what cuBLAS runs at 1024 x 1024 x 8192).
  for (const auto& shape : kSmallShapes) {
    for (const auto& [tile_n, split_k] : std::vector<std::pair<int64_t, int64_t>>{{256, 1},
                                                                                  {256, 2},
                                                                                  {256, 4},
                                                                                  {128, 1},
                                                                                  {128, 2},
                                                                                  {128, 4},
                                                                                  {64, 1},
                                                                                  {64, 2},
                                                                                  {64, 8}}) {
      matmul_scheduler::MatmulParams params;
      params.tile_n = tile_n;
      params.split_k = split_k;
      params.tma_store = split_k == 1 ? 1 : 0;
      params.stages = matmul_scheduler::maxGemmStages(tile_n, split_k == 1);
      params.ctas = split_k > 1 ? 0 : driver::deviceProperties(0).sm_count;
      add("BM_Gemm/braze_tile_n_" + std::to_string(tile_n) + "_split_" + std::to_string(split_k),
          GemmKind::BrazeForced, shape, params);
    }
  }
  constexpr int64_t kEpilogueShapes[][3] = {
      {8192, 8192, 8192}, {4096, 11008, 4096}, {16384, 28672, 8192}};
  for (const auto& shape : kEpilogueShapes) {
    for (const bool residual : {false, true}) {
      for (const bool fused : {true, false}) {
        const std::string name = std::string("BM_GemmEpilogue/") +
                                 (residual ? "bias_gelu_residual/" : "bias_gelu/") +
                                 (fused ? "braze_fused" : "cublas_then_kernel");
        timed(benchmark::RegisterBenchmark(name.c_str(), BM_GemmEpilogue, fused, residual), shape);
      }
    }
  }
  // Operands cast from fp32, on shapes where the scheduler converts them in the kernel (each
  // fp32 tile read once); elsewhere the cast runs first and braze_fused would be skipped.
  struct PrologueCase {
    bool convert_x, convert_w;
    int64_t shape[3];
  };
  const PrologueCase prologue_cases[] = {{true, false, {8192, 256, 8192}},
                                         {true, false, {16384, 128, 4096}},
                                         {false, true, {128, 11008, 4096}},
                                         {false, true, {64, 28672, 8192}}};
  for (const PrologueCase& c : prologue_cases) {
    for (const auto& [kind, label] : std::vector<std::pair<PrologueKind, const char*>>{
             {PrologueKind::BrazeFused, "braze_fused"},
             {PrologueKind::BrazeCastThenGemm, "braze_cast_then_gemm"},
             {PrologueKind::CastThenCublas, "cublas_cast_then_gemm"}}) {
      const std::string name =
          std::string("BM_GemmPrologue/") + (c.convert_x ? "x_fp32/" : "w_fp32/") + label;
      timed(benchmark::RegisterBenchmark(name.c_str(), BM_GemmPrologue, kind, c.convert_x,
                                         c.convert_w),
            c.shape);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
