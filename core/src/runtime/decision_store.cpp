#include "braze/runtime/decision_store.h"

#include "braze/ir/structural_hash.h"
#include "braze/runtime/build_id.h"
#include "braze/runtime/content_hash.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "runtime/default_store.h"

namespace braze {

namespace {

runtime_detail::DefaultStoreSlot<DecisionStore>& defaultStore() {
  static runtime_detail::DefaultStoreSlot<DecisionStore> slot;
  return slot;
}

}  // namespace

std::string runtimeKey(const Fusion& fusion, const RunContext& context,
                       const RuntimeOptions& options) {
  ContentHasher hasher("braze-runtime-key-1");
  hasher.add(BRAZE_VERSION_STRING).add(coreBuildId()).add(canonicalForm(fusion));
  hasher.add(static_cast<int64_t>(context.arguments.size()));
  for (size_t i = 0; i < context.arguments.size(); ++i) {
    if (const auto* tensor = std::get_if<TensorArgumentInfo>(&context.arguments[i])) {
      hasher.add("tensor").add(toString(tensor->dtype));
      hasher.add(static_cast<int64_t>(tensor->sizes.size()));
      for (int64_t size : tensor->sizes) hasher.add(size);
      for (int64_t stride : tensor->strides) hasher.add(stride);
      hasher.add(int64_t{tensor->has_storage});
    } else {
      hasher.add("scalar");
      hasher.add(std::get<ScalarValue>(context.arguments[i]));
    }
    hasher.add(i < context.data_alignments.size() ? context.data_alignments[i] : -1);
  }
  const driver::DeviceProperties& device = context.properties;
  hasher.add(device.arch.toString()).add(device.sm_count).add(device.max_threads_per_block);
  hasher.add(device.max_threads_per_sm).add(device.warp_size);
  hasher.add(device.max_shared_memory_per_block).add(device.max_shared_memory_per_block_optin);
  hasher.add(device.shared_memory_per_sm).add(device.registers_per_sm);
  hasher.add(device.l2_cache_bytes);
  hasher.add(options.scheduler).add(static_cast<int64_t>(options.segment_schedulers.size()));
  for (const std::string& forced : options.segment_schedulers) hasher.add(forced);
  // The architecture compiled for: an ahead-of-time build for sm_90 and a run on an H100 that
  // names no architecture make the same kernels, so they share decisions.
  hasher.add(options.arch ? options.arch->toString() : device.arch.toString());
  return hasher.hex();
}

std::shared_ptr<DecisionStore> defaultDecisionStore() {
  return defaultStore().get();
}

void setDefaultDecisionStore(std::shared_ptr<DecisionStore> store) {
  defaultStore().set(std::move(store));
}

void registerDefaultDecisionStoreFactory(std::function<std::shared_ptr<DecisionStore>()> factory) {
  defaultStore().setFactory(std::move(factory));
}

}  // namespace braze
