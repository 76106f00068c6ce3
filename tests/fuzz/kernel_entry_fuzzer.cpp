// libFuzzer target for everything the persistent cache reads from disk: kernel entries
// (serde/src/kernel_entry.cpp), runtime entries (runtime_cache.cpp) with the kernel recipes
// they hold (kernel_recipe_codec.cpp, core's rebuildKernel and the executor's launch plan), and
// saved fusion definitions (fusion_definition_replay.cpp). Any bytes, as a file could hold,
// are refused with a reason or decode to something that reads back the same when written
// again; a recipe that fits a fusion gives a launch plan or a braze::Error, never a crash.
// Built and run by tools/run-fuzz.sh (clang, AddressSanitizer and UndefinedBehaviorSanitizer).

#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>

#include "braze/ir/structural_hash.h"
#include "braze/runtime/kernel_executor.h"
#include "braze/runtime/kernel_recipe.h"
#include "braze/runtime/kernel_store.h"
#include "braze/serde/fusion_definition.h"
#include "braze/serde/kernel_cache.h"
#include "braze/serde/runtime_cache.h"
#include "braze/serde/runtime_entry_generated.h"
#include "kernel_recipe_codec.h"
#include "support/normalization_fusions.h"

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

/// The normalizations whose segments the seed entries' recipes were made for, with the sizes
/// to plan launches at.
struct Target {
  std::unique_ptr<braze::Fusion> fusion;
  std::vector<braze::ExecutorArgument> arguments;
};

const std::vector<Target>& targets() {
  static const std::vector<Target> all = [] {
    std::vector<Target> made;
    for (const braze::test::Normalization kind : braze::test::allNormalizations()) {
      Target target;
      target.fusion = braze::test::makeNormalization(kind, braze::DataType::BFloat16);
      const auto sizes = braze::test::normalizationInputSizes(kind, 8, 1024);
      CUdeviceptr address = 1 << 20;
      for (size_t i = 0; i < sizes.size(); ++i) {
        const braze::DataType dtype = target.fusion->inputs()[i]->dtype();
        std::vector<int64_t> strides(sizes[i].size(), 1);
        for (size_t d = sizes[i].size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[i][d];
        target.arguments.emplace_back(
            braze::DeviceTensor::borrow(dtype, sizes[i], strides, address, 0, nullptr));
        address += 1 << 24;
      }
      made.push_back(std::move(target));
    }
    return made;
  }();
  return all;
}

/// The recipes of a runtime entry, read past its content hash (as a crafted file with a valid
/// hash would be), rebuilt against each target and planned.
void checkRecipes(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), 16, 1 << 20);
  if (!braze::serde::fb::VerifyRuntimeEntryBuffer(verifier)) return;
  const auto* entry = braze::serde::fb::GetRuntimeEntry(bytes.data());
  if (entry->segments() == nullptr) return;
  for (const auto* segment : *entry->segments()) {
    if (segment->kernel() == nullptr) continue;
    std::string problem;
    const std::optional<braze::KernelRecipe> recipe =
        braze::serde::detail::decodeKernelRecipe(*segment->kernel(), problem);
    if (!recipe) {
      if (problem.empty()) std::abort();
      continue;
    }
    for (const Target& target : targets()) {
      try {
        std::unique_ptr<braze::Fusion> fusion = target.fusion->clone();
        braze::GeneratedKernel kernel = braze::rebuildKernel(*recipe, *fusion, "");
        braze::CompiledKernel::Parts parts;
        parts.kernel_name = recipe->kernel_name;
        parts.cubin = {'\0'};
        braze::KernelExecutor executor(*fusion, std::move(kernel),
                                       braze::CompiledKernel::restore(std::move(parts)));
        executor.plan(target.arguments);
      } catch (const braze::Error&) {
        // refused with a reason: what a recipe that does not fit must give
      }
    }
  }
}

void checkFusionDefinition(std::span<const uint8_t> bytes) {
  std::unique_ptr<braze::Fusion> fusion;
  try {
    fusion = braze::serde::decodeFusionDefinition(bytes, "fuzz input");
  } catch (const braze::Error&) {
    return;
  }
  // A definition that loads saves and loads again as the same fusion.
  const std::unique_ptr<braze::Fusion> again = braze::serde::decodeFusionDefinition(
      braze::serde::encodeFusionDefinition(*fusion), "fuzz input, saved again");
  if (braze::canonicalForm(*again) != braze::canonicalForm(*fusion)) std::abort();
}

void checkKernelEntry(std::span<const uint8_t> bytes) {
  const braze::serde::DecodedKernelEntry decoded = braze::serde::decodeKernelEntry(bytes);
  if (!decoded.kernel) {
    if (decoded.problem.empty()) std::abort();  // a refusal always says why
    return;
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
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  checkRuntimeEntry(bytes);
  checkRecipes(bytes);
  checkFusionDefinition(bytes);
  checkKernelEntry(bytes);
  return 0;
}
