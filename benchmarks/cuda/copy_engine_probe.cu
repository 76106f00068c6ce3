// How fast the copy engines move an allgather between the GPUs of one host, pulled (each GPU's
// engines read its peers' parts) or pushed (each GPU's engines write its part into its peers),
// peers at once or one after another, alone and beside a bf16 GEMM on every GPU. It decides how
// Braze's copy-engine allgather (core/src/host/copy_engine_allgather.cpp) moves its bytes.
//
//   nvcc -O2 -std=c++17 -arch=sm_90 benchmarks/cuda/copy_engine_probe.cu -lcublas \
//     -o /tmp/copy_engine_probe && /tmp/copy_engine_probe [part MiB ...]
//
// One process drives every GPU. Times are per GPU, from a fork event to the join of its copy
// streams, median of 7 repetitions; GB/s counts the bytes each GPU receives ((n - 1) parts).
// Beside GEMMs: how much longer the 12 GEMMs took than alone, i.e. what the copies cost them.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                             \
  do {                                                                                          \
    cudaError_t e = (call);                                                                     \
    if (e != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

namespace {

enum class Direction { Pull, Push };

struct Gpu {
  char* part = nullptr;      // this GPU's part
  char* gathered = nullptr;  // every GPU's part, in rank order
  cudaStream_t main = nullptr;
  std::vector<cudaStream_t> copies;  // one per peer
  cudaEvent_t fork = nullptr, join = nullptr;
  std::vector<cudaEvent_t> done;
  // The GEMM beside the copies.
  cublasHandle_t blas = nullptr;
  cudaStream_t gemm_stream = nullptr;
  __nv_bfloat16 *a = nullptr, *b = nullptr, *c = nullptr;
  cudaEvent_t gemm_start = nullptr, gemm_end = nullptr;
};

constexpr int kGemmM = 4096, kGemmN = 7168, kGemmK = 8192;

void enqueueGemms(Gpu& g, int device, int count) {
  CHECK(cudaSetDevice(device));
  const float one = 1.0f, zero = 0.0f;
  CHECK(cudaEventRecord(g.gemm_start, g.gemm_stream));
  for (int i = 0; i < count; ++i) {
    if (cublasGemmEx(g.blas, CUBLAS_OP_N, CUBLAS_OP_N, kGemmN, kGemmM, kGemmK, &one, g.b,
                     CUDA_R_16BF, kGemmN, g.a, CUDA_R_16BF, kGemmK, &zero, g.c, CUDA_R_16BF, kGemmN,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasGemmEx failed\n");
      std::exit(1);
    }
  }
  CHECK(cudaEventRecord(g.gemm_end, g.gemm_stream));
}

// Enqueues one allgather of `bytes` a part on every GPU.
void enqueueAllgather(std::vector<Gpu>& gpus, size_t bytes, Direction direction, bool at_once) {
  const int n = static_cast<int>(gpus.size());
  for (int d = 0; d < n; ++d) {
    Gpu& g = gpus[d];
    CHECK(cudaSetDevice(d));
    CHECK(cudaEventRecord(g.fork, g.main));
    for (int k = 1; k < n; ++k) {
      const int peer = (d + k) % n;
      cudaStream_t s = at_once ? g.copies[k] : g.copies[1];
      CHECK(cudaStreamWaitEvent(s, g.fork, 0));
      if (direction == Direction::Pull) {
        CHECK(cudaMemcpyAsync(g.gathered + peer * bytes, gpus[peer].part, bytes,
                              cudaMemcpyDeviceToDevice, s));
      } else {
        CHECK(cudaMemcpyAsync(gpus[peer].gathered + d * bytes, g.part, bytes,
                              cudaMemcpyDeviceToDevice, s));
      }
      CHECK(cudaEventRecord(g.done[k], s));
      CHECK(cudaStreamWaitEvent(g.main, g.done[k], 0));
    }
    CHECK(cudaEventRecord(g.join, g.main));
  }
}

void synchronizeAll(int n) {
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaDeviceSynchronize());
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::printf("needs 2 or more GPUs, found %d\n", n);
    return 0;
  }
  std::vector<size_t> parts_mib;
  for (int i = 1; i < argc; ++i) parts_mib.push_back(std::stoul(argv[i]));
  if (parts_mib.empty()) parts_mib = {16, 64};
  const size_t largest = *std::max_element(parts_mib.begin(), parts_mib.end()) << 20;

  std::vector<Gpu> gpus(n);
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    for (int p = 0; p < n; ++p)
      if (p != d) CHECK(cudaDeviceEnablePeerAccess(p, 0));
    Gpu& g = gpus[d];
    CHECK(cudaMalloc(&g.part, largest));
    CHECK(cudaMalloc(&g.gathered, largest * n));
    CHECK(cudaMemset(g.part, d + 1, largest));
    CHECK(cudaStreamCreateWithFlags(&g.main, cudaStreamNonBlocking));
    g.copies.assign(n, nullptr);
    g.done.assign(n, nullptr);
    for (int k = 1; k < n; ++k) {
      CHECK(cudaStreamCreateWithFlags(&g.copies[k], cudaStreamNonBlocking));
      CHECK(cudaEventCreate(&g.done[k]));
    }
    CHECK(cudaEventCreate(&g.fork));
    CHECK(cudaEventCreate(&g.join));
    CHECK(cudaStreamCreateWithFlags(&g.gemm_stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&g.gemm_start));
    CHECK(cudaEventCreate(&g.gemm_end));
    if (cublasCreate(&g.blas) != CUBLAS_STATUS_SUCCESS) return 1;
    cublasSetStream(g.blas, g.gemm_stream);
    CHECK(cudaMalloc(&g.a, sizeof(__nv_bfloat16) * kGemmM * kGemmK));
    CHECK(cudaMalloc(&g.b, sizeof(__nv_bfloat16) * kGemmK * kGemmN));
    CHECK(cudaMalloc(&g.c, sizeof(__nv_bfloat16) * kGemmM * kGemmN));
    CHECK(cudaMemset(g.a, 0x3c, sizeof(__nv_bfloat16) * kGemmM * kGemmK));
    CHECK(cudaMemset(g.b, 0x3c, sizeof(__nv_bfloat16) * kGemmK * kGemmN));
  }
  synchronizeAll(n);

  // The GEMM alone, per call.
  constexpr int kGemms = 12;
  std::vector<float> gemm_alone;
  for (int rep = 0; rep < 3; ++rep) {
    for (int d = 0; d < n; ++d) enqueueGemms(gpus[d], d, kGemms);
    synchronizeAll(n);
    float ms = 0;
    for (int d = 0; d < n; ++d) {
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, gpus[d].gemm_start, gpus[d].gemm_end));
      ms = std::max(ms, t);
    }
    gemm_alone.push_back(ms / kGemms);
  }
  const float gemm_ms = median(gemm_alone);
  std::printf("%d GPUs; GEMM %dx%dx%d bf16 alone: %.3f ms (%.0f TFLOP/s)\n", n, kGemmM, kGemmN,
              kGemmK, gemm_ms, 2.0 * kGemmM * kGemmN * kGemmK / gemm_ms / 1e9);
  std::printf("%-6s %-5s %-8s %-12s %10s %8s %14s\n", "MiB", "how", "peers", "beside", "ms", "GB/s",
              "GEMMs longer by");

  for (const size_t mib : parts_mib) {
    const size_t bytes = mib << 20;
    for (const Direction direction : {Direction::Pull, Direction::Push}) {
      for (const bool at_once : {true, false}) {
        for (const bool beside_gemm : {false, true}) {
          std::vector<float> times, slowdowns;
          for (int rep = 0; rep < 7; ++rep) {
            if (beside_gemm) {
              for (int d = 0; d < n; ++d) enqueueGemms(gpus[d], d, kGemms);
              // Let the GEMMs fill the SMs before the copies start.
              for (int d = 0; d < n; ++d) {
                CHECK(cudaSetDevice(d));
                CHECK(cudaStreamWaitEvent(gpus[d].main, gpus[d].gemm_start, 0));
              }
            }
            enqueueAllgather(gpus, bytes, direction, at_once);
            synchronizeAll(n);
            float worst = 0, gemm = 0;
            for (int d = 0; d < n; ++d) {
              float t = 0;
              CHECK(cudaEventElapsedTime(&t, gpus[d].fork, gpus[d].join));
              worst = std::max(worst, t);
              if (beside_gemm) {
                CHECK(cudaEventElapsedTime(&t, gpus[d].gemm_start, gpus[d].gemm_end));
                gemm = std::max(gemm, t);
              }
            }
            times.push_back(worst);
            if (beside_gemm) slowdowns.push_back(gemm - gemm_ms * kGemms);
          }
          const float ms = median(times);
          const double gbs = static_cast<double>(bytes) * (n - 1) / ms / 1e6;
          char slow[32] = "";
          if (beside_gemm) std::snprintf(slow, sizeof(slow), "%+.3f ms", median(slowdowns));
          std::printf("%-6zu %-5s %-8s %-12s %10.3f %8.0f %14s\n", mib,
                      direction == Direction::Pull ? "pull" : "push",
                      at_once ? "at once" : "in turn", beside_gemm ? "12 GEMMs" : "nothing", ms,
                      gbs, slow);
        }
      }
    }
  }
  // Every gathered block holds its rank's byte.
  for (int d = 0; d < n; ++d) {
    CHECK(cudaSetDevice(d));
    for (int p = 0; p < n; ++p) {
      if (p == d) continue;  // a GPU's own block is not copied here
      unsigned char value = 0;
      CHECK(cudaMemcpy(&value, gpus[d].gathered + p * (parts_mib.back() << 20) + 12345, 1,
                       cudaMemcpyDeviceToHost));
      if (value != p + 1) {
        std::printf("GPU %d: block %d holds %d, not %d\n", d, p, value, p + 1);
        return 1;
      }
    }
  }
  std::printf("gathered blocks checked\n");
  return 0;
}
