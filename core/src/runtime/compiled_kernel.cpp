#include "braze/runtime/compiled_kernel.h"

#include <ostream>
#include <regex>
#include <sstream>

#include "braze/driver/cuda_driver.h"
#include "braze/driver/nvrtc_compiler.h"
#include "braze/error.h"
#include "braze/runtime/kernel_store.h"

namespace braze {

namespace {

std::vector<std::string> nvrtcOptionsFor(const driver::GpuArch& arch,
                                         const CompileOptions& options) {
  std::vector<std::string> flags = {
      "--std=c++17",
      "--gpu-architecture=" +
          (options.ptx_only ? "compute_" + arch.toString().substr(3) : arch.toString()),
      // The resource report is how registers and spills are known without a GPU.
      "-Xptxas=-v",
      "-default-device",
  };
  if (options.minimal && driver::nvrtcVersion() >= std::pair{12, 4}) flags.push_back("-minimal");
  if (options.max_registers > 0)
    flags.push_back("--maxrregcount=" + std::to_string(options.max_registers));
  if (options.line_info) flags.push_back("--generate-line-info");
  if (options.fast_math) flags.push_back("--use_fast_math");
  flags.insert(flags.end(), options.extra_options.begin(), options.extra_options.end());
  return flags;
}

// Without an explicit target, the kernel is compiled for device 0.
driver::GpuArch deviceArch() {
  std::string reason;
  BRAZE_USER_CHECK(driver::isDriverAvailable(&reason))
      << "CompiledKernel::compile: no target architecture was given and none can be read from a "
         "device (no CUDA driver or device: "
      << reason << "); pass CompileOptions{.arch = driver::GpuArch{9, 0}} to compile without a GPU";
  return driver::deviceProperties().arch;
}

}  // namespace

KernelResources parsePtxasResources(const std::string& log, const std::string& kernel_name) {
  KernelResources resources;
  // ptxas prints a block per entry function:
  //   ptxas info    : Compiling entry function 'k' for 'sm_90'
  //   ptxas info    : Function properties for k
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 8 registers, used 1 barriers, 256 bytes smem
  // then one block per device function it calls that was not inlined (block reductions):
  //   ptxas info    : Function properties for _ZN5braze11blockReduce...
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // Registers are the entry's (they cover its callees); a callee's stack frame and spills add
  // to the kernel's, so a spill anywhere in the kernel is seen.
  std::istringstream lines(log);
  std::string line;
  bool in_kernel = false;
  bool in_callee = false;
  struct Frame {
    int64_t stack = 0, spill_stores = 0, spill_loads = 0;
  } own, callees;
  const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  const std::regex registers(R"(Used (\d+) registers)");
  const std::regex barriers(R"(used (\d+) barriers)");
  const std::regex smem(R"((\d+) bytes smem)");
  std::smatch match;
  while (std::getline(lines, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      in_kernel = line.find("'" + kernel_name + "'") != std::string::npos;
      in_callee = false;
      resources.reported = resources.reported || in_kernel;
      continue;
    }
    if (!in_kernel) continue;
    if (const size_t at = line.find("Function properties for "); at != std::string::npos) {
      in_callee = line.compare(at + 24, std::string::npos, kernel_name) != 0;
      continue;
    }
    if (std::regex_search(line, match, frame)) {
      Frame& target = in_callee ? callees : own;
      target.stack += std::stoll(match[1]);
      target.spill_stores += std::stoll(match[2]);
      target.spill_loads += std::stoll(match[3]);
    }
    if (std::regex_search(line, match, registers)) resources.registers = std::stoi(match[1]);
    if (std::regex_search(line, match, barriers)) resources.barriers = std::stoi(match[1]);
    if (std::regex_search(line, match, smem))
      resources.static_shared_memory_bytes = std::stoll(match[1]);
  }
  resources.stack_frame_bytes = own.stack + callees.stack;
  resources.spill_store_bytes = own.spill_stores + callees.spill_stores;
  resources.spill_load_bytes = own.spill_loads + callees.spill_loads;
  return resources;
}

namespace {

// BRAZE_DUMP=compile_log,ptx: what NVRTC produced (or the kernel cache gave back).
void dumpCompiled(const CompiledKernel& kernel, const DumpOptions& dump) {
  if (dump.compile_log) {
    dump.out() << "=== compile log of " << kernel.kernelName() << " (" << kernel.arch().toString()
               << (kernel.fromStore() ? ", from the kernel cache" : "") << ")\n"
               << kernel.compileLog() << "\n";
  }
  if (dump.ptx) dump.out() << "=== PTX of " << kernel.kernelName() << "\n" << kernel.ptx() << "\n";
}

// ptxas reports, as "info" lines, that it fell back from the Hopper machinery a kernel asked
// for: wgmma serialized (C7510 to C7512: each waits for the previous one, so the tensor cores
// idle between them) or setmaxnreg ignored (C7508). The kernel would still compute the right
// result, several times slower, and nothing else would say so: they are errors.
void rejectHopperFallbacks(const std::string& log, const std::string& kernel_name) {
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    BRAZE_USER_CHECK(line.find("wgmma.mma_async instructions are serialized") == std::string::npos)
        << "kernel " << kernel_name << ": ptxas serialized its wgmma instructions, which would "
        << "run the tensor cores far below their speed:\n  " << line
        << "\nCommon causes: accumulators read or written between a wgmma and the wait for it "
        << "(put wgmma::fenceAccumulators after waitGroup), more live registers than the "
        << "warp group has (raise its setmaxnreg budget or shrink the tile), or a call that is "
        << "not inlined inside the pipeline";
    BRAZE_USER_CHECK(line.find("'setmaxnreg' ignored") == std::string::npos)
        << "kernel " << kernel_name << ": ptxas ignored setmaxnreg:\n  " << line
        << "\nsetmaxnreg needs a register cap at kernel entry: declare "
        << "__launch_bounds__(threads, 1) (with the 1) or compile with max_registers";
  }
}

}  // namespace

CompiledKernel CompiledKernel::compile(std::string source, std::string kernel_name,
                                       const CompileOptions& options) {
  BRAZE_USER_CHECK(!kernel_name.empty()) << "CompiledKernel::compile: the kernel name is empty";
  CompiledKernel kernel;
  kernel.arch_ = options.arch ? *options.arch : deviceArch();
  kernel.nvrtc_options_ = nvrtcOptionsFor(kernel.arch_, options);
  std::string key;
  if (options.store) {
    key = kernelKey(source, kernel_name, kernel.nvrtc_options_, driver::nvrtcVersion());
    if (std::optional<CompiledKernel> stored = options.store->find(key)) {
      dumpCompiled(*stored, options.dump);
      return std::move(*stored);
    }
  }
  driver::NvrtcOutput output =
      driver::compileWithNvrtc(source, kernel_name + ".cu", kernel.nvrtc_options_);
  kernel.source_ = std::move(source);
  kernel.kernel_name_ = std::move(kernel_name);
  kernel.cubin_ = std::move(output.cubin);
  kernel.ptx_ = std::move(output.ptx);
  kernel.log_ = std::move(output.log);
  kernel.resources_ = parsePtxasResources(kernel.log_, kernel.kernel_name_);
  kernel.nvrtc_version_ = driver::nvrtcVersion();
  dumpCompiled(kernel, options.dump);
  rejectHopperFallbacks(kernel.log_, kernel.kernel_name_);
  if (options.store) options.store->insert(key, kernel);
  return kernel;
}

CompiledKernel CompiledKernel::restore(Parts parts) {
  CompiledKernel kernel;
  kernel.source_ = std::move(parts.source);
  kernel.kernel_name_ = std::move(parts.kernel_name);
  kernel.arch_ = parts.arch;
  kernel.nvrtc_options_ = std::move(parts.nvrtc_options);
  kernel.cubin_ = std::move(parts.cubin);
  kernel.ptx_ = std::move(parts.ptx);
  kernel.log_ = std::move(parts.compile_log);
  kernel.resources_ = parts.resources;
  kernel.nvrtc_version_ = parts.nvrtc_version;
  kernel.from_store_ = true;
  return kernel;
}

}  // namespace braze
