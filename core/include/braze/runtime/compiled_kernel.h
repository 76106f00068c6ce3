#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "braze/driver/device_properties.h"
#include "braze/runtime/dump_options.h"

namespace braze {

class KernelStore;

/// How to compile a kernel. Without `arch` the architecture of device 0 is used, which needs a
/// GPU; give it explicitly (sm_90, sm_100) to compile on a machine without one.
struct CompileOptions {
  std::optional<driver::GpuArch> arch;
  int max_registers = 0;  ///< 0: let ptxas decide.
  bool line_info = false;
  bool fast_math = false;
  /// Compile for the virtual architecture (compute_90 rather than sm_90): PTX only, no cubin;
  /// the driver compiles the PTX when the kernel is loaded, also for newer GPUs.
  bool ptx_only = false;
  /// NVRTC's --minimal (NVRTC 12.4 and later): its built-in declarations leave out textures,
  /// surfaces, the device runtime (cudaMalloc, launches from device code) and the runtime and
  /// driver API types, which generated kernels never use. The front end then parses about
  /// 6 ms less per compile (braze_compile_time_benchmark, 2 cores) and the PTX and cubin are
  /// the same. False for hand-written sources that use those features.
  bool minimal = true;
  std::vector<std::string> extra_options = {};  ///< passed to NVRTC as given
  /// `ptx` and `compile_log` print what NVRTC produced.
  DumpOptions dump = {};
  /// Compiled kernels kept between processes (braze/runtime/kernel_store.h): consulted by
  /// content address before NVRTC runs, given each fresh compile. Null: always NVRTC.
  std::shared_ptr<KernelStore> store = nullptr;
};

/// Resources ptxas reported for the kernel.
struct KernelResources {
  /// False when NVRTC's log held no ptxas report for the kernel (seen with NVRTC 13.0 on a
  /// machine whose GPU matches the target); the numbers below are then unknown (0), and the
  /// executor reads them from the loaded function instead.
  bool reported = false;
  int registers = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t static_shared_memory_bytes = 0;
  int barriers = 0;
};

/// The result of compiling one generated kernel: nothing but compilation. It holds the CUDA
/// source, the exact NVRTC options, the cubin and PTX, the kernel's name, the resources ptxas
/// reported and the compile log. It knows nothing of fusions or launches (KernelExecutor
/// does), so it can be cached, serialized and compiled on machines without a GPU.
class CompiledKernel {
 public:
  /// Compiles `source`, whose `extern "C" __global__` entry is `kernel_name`. Throws a
  /// braze::Error with NVRTC's log and the path of the written source on failure, and when
  /// ptxas reports that it serialized wgmma instructions or ignored setmaxnreg (silent
  /// fallbacks that cost the kernel most of its speed).
  static CompiledKernel compile(std::string source, std::string kernel_name,
                                const CompileOptions& options = {});

  /// What compile() produces, field by field: how a kernel store gives a kernel back without
  /// NVRTC.
  struct Parts {
    std::string source;
    std::string kernel_name;
    driver::GpuArch arch;
    std::vector<std::string> nvrtc_options;
    std::vector<char> cubin;
    std::string ptx;
    std::string compile_log;
    KernelResources resources;
    std::pair<int, int> nvrtc_version;
  };
  /// A kernel compiled earlier, from its parts. The caller vouches that `cubin` is what NVRTC
  /// `nvrtc_version` made of `source` with `nvrtc_options` (a kernel store checks the content
  /// address and a hash of the cubin before it calls this).
  static CompiledKernel restore(Parts parts);
  /// True when the kernel came from a kernel store rather than NVRTC.
  bool fromStore() const { return from_store_; }

  const std::string& source() const { return source_; }
  const std::string& kernelName() const { return kernel_name_; }
  const driver::GpuArch& arch() const { return arch_; }
  const std::vector<std::string>& nvrtcOptions() const { return nvrtc_options_; }
  const std::vector<char>& cubin() const { return cubin_; }
  const std::string& ptx() const { return ptx_; }
  const std::string& compileLog() const { return log_; }
  const KernelResources& resources() const { return resources_; }
  /// NVRTC's version at compile time, e.g. {13, 0}.
  std::pair<int, int> nvrtcVersion() const { return nvrtc_version_; }

 private:
  std::string source_;
  std::string kernel_name_;
  driver::GpuArch arch_;
  std::vector<std::string> nvrtc_options_;
  std::vector<char> cubin_;
  std::string ptx_;
  std::string log_;
  KernelResources resources_;
  std::pair<int, int> nvrtc_version_;
  bool from_store_ = false;
};

/// Reads ptxas' resource report (-Xptxas=-v) for `kernel_name` out of an NVRTC log.
KernelResources parsePtxasResources(const std::string& log, const std::string& kernel_name);

}  // namespace braze
