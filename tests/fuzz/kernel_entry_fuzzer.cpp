// libFuzzer target for the persistent caches' readers (serde/src/kernel_entry.cpp,
// runtime_cache.cpp): any bytes, as a file in the cache folder could hold, are either refused
// with a reason or decode to a kernel whose content address matches what it holds, or to
// decisions that read back the same when written again. Built and run by tools/run-fuzz.sh (clang,
// AddressSanitizer and UndefinedBehaviorSanitizer).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "braze/runtime/kernel_store.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"

namespace {

void checkRuntimeEntry(std::span<const uint8_t> bytes) {
  const braze::serde::DecodedRuntimeEntry decoded = braze::serde::decodeRuntimeEntry(bytes);
  if (!decoded.decisions) {
    if (decoded.problem.empty()) std::abort();
    return;
  }
  const std::string key(64, 'f');
  const braze::serde::DecodedRuntimeEntry again = braze::serde::decodeRuntimeEntry(
      braze::serde::encodeRuntimeEntry(key, *decoded.decisions), key);
  if (!again.decisions || *again.decisions != *decoded.decisions) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  checkRuntimeEntry(bytes);
  const braze::serde::DecodedKernelEntry decoded = braze::serde::decodeKernelEntry(bytes);
  if (!decoded.kernel) {
    if (decoded.problem.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  const braze::CompiledKernel& kernel = *decoded.kernel;
  // Whatever was accepted is what its key says it is.
  if (braze::kernelKey(kernel.source(), kernel.kernelName(), kernel.nvrtcOptions(),
                       kernel.nvrtcVersion()) != decoded.key ||
      kernel.cubin().empty())
    std::abort();
  // And it reads back the same when written again.
  const std::vector<uint8_t> again = braze::serde::encodeKernelEntry(decoded.key, kernel);
  const braze::serde::DecodedKernelEntry twice =
      braze::serde::decodeKernelEntry(again, decoded.key);
  if (!twice.kernel || twice.kernel->cubin() != kernel.cubin()) std::abort();
  return 0;
}
