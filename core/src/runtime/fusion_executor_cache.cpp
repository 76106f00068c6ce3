// The executor cache: input signatures to runtimes, exact signatures to frozen plans.

#include "braze/runtime/fusion_executor_cache.h"

#include <algorithm>
#include <sstream>

#include "braze/driver/cuda_driver.h"
#include "braze/runtime/prepare_for_scheduling.h"
#include "runtime/contraction_staging.h"
#include "runtime/extent_equalities.h"

namespace braze {

struct FusionExecutorCache::RuntimeEntry {
  RunKey signature;
  const Fusion* definition = nullptr;  ///< fusion_ or a staged copy of it
  RuntimeOptions options;
  std::shared_ptr<FusionKernelRuntime> runtime;
  uint64_t last_use = 0;
};

struct FusionExecutorCache::PlanEntry {
  std::shared_ptr<FusionKernelRuntime> runtime;
  std::shared_ptr<const ExecutionPlan> plan;
  std::atomic<uint64_t> last_use{0};
};

namespace {

RuntimeOptions runtimeOptionsOf(const RunOptions& options) {
  RuntimeOptions runtime;
  runtime.scheduler = options.scheduler;
  runtime.segment_schedulers = options.segment_schedulers;
  runtime.arch = options.arch;
  runtime.compile_threads = options.compile_threads;
  runtime.stream_pool = options.stream_pool;
  runtime.dump = options.dump;
  return runtime;
}

/// The part of the run options that selects a runtime, as text for the run keys.
std::string optionsText(const RunOptions& options) {
  if (options.scheduler.empty() && options.segment_schedulers.empty() && !options.arch &&
      options.device == 0 && options.stream_pool == RunOptions{}.stream_pool &&
      !options.reference_evaluator) {
    return {};
  }
  std::string text = options.scheduler + ";" + std::to_string(options.device) + ";";
  for (const std::string& name : options.segment_schedulers) text += name + ",";
  if (options.arch) text += options.arch->toString();
  if (options.stream_pool != RunOptions{}.stream_pool)
    text += ";streams=" + std::to_string(options.stream_pool);
  if (options.reference_evaluator) text += ";reference";
  return text;
}

/// Whether a run of `fusion` on host tensors `inputs` goes to the device with its host
/// program copying the inputs itself, each stream loop slice by slice so that copies overlap
/// kernels (overlap needs page-locked host memory; pageable memory is copied correctly, without
/// it), and copying the results back itself (into host buffers, or into the host input an
/// output is written into): for fusions with stream axes whose inputs are contiguous row-major
/// host tensors laid out as their definition says, where no output is an input.
bool stagesHostInputs(const Fusion& fusion, const std::vector<FusionArgument>& inputs) {
  const std::vector<TensorView*> tensors = fusion.allTensors();
  if (std::none_of(tensors.begin(), tensors.end(),
                   [](const TensorView* tv) { return tv->streamAxis().has_value(); }))
    return false;
  for (const Val* output : fusion.outputs()) {
    if (fusion.isInput(output)) return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (std::holds_alternative<ScalarValue>(inputs[i])) continue;
    const auto* host = std::get_if<HostTensor>(&inputs[i]);
    if (host == nullptr || !host->isContiguous()) return false;
    const std::vector<int64_t>& order = fusion.inputs()[i]->as<TensorView>()->allocationOrder();
    for (size_t d = 0; d < order.size(); ++d) {
      if (order[d] != static_cast<int64_t>(d)) return false;
    }
  }
  return true;
}

// Runs a frozen plan as the options say: directly or as a CUDA graph; its results on the
// device, or (a plan that copies host inputs itself) back in host memory.
std::vector<FusionArgument> runFrozen(const FusionKernelRuntime& runtime, const ExecutionPlan& plan,
                                      const std::vector<FusionArgument>& inputs,
                                      const RunOptions& options) {
  if (plan.host_results) {
    std::vector<HostTensor> outputs =
        options.cuda_graph ? runtime.runGraphToHost(plan, inputs, options.stream)
                           : runtime.runToHost(plan, inputs, options.stream, options.trace);
    return {outputs.begin(), outputs.end()};
  }
  std::vector<DeviceTensor> outputs =
      options.cuda_graph
          ? runtime.runGraph(plan, inputs, options.stream)
          : runtime.run(plan, inputs, options.stream, options.trace, options.outputs_into);
  return {std::make_move_iterator(outputs.begin()), std::make_move_iterator(outputs.end())};
}

}  // namespace

const SchedulerRegistry& defaultSchedulerRegistry() {
  static const SchedulerRegistry registry;
  return registry;
}

FusionExecutorCache::FusionExecutorCache(std::unique_ptr<Fusion> fusion,
                                         ExecutorCacheOptions options)
    : fusion_(std::move(fusion)),
      options_(options),
      registry_(options.registry ? *options.registry : defaultSchedulerRegistry()) {
  BRAZE_USER_CHECK(fusion_ != nullptr) << "FusionExecutorCache: the fusion is null";
  BRAZE_USER_CHECK(!fusion_->outputs().empty())
      << "FusionExecutorCache: the fusion has no outputs; mark results with addOutput";
  for (const Val* output : fusion_->outputs()) {
    BRAZE_USER_CHECK(output->isA<TensorView>())
        << "FusionExecutorCache: output " << output->name()
        << " is a scalar; only tensors can be outputs of a run (make it a 0-d tensor)";
  }
  extent_equalities_ = runtime_detail::collectExtentEqualities(*fusion_);
  // After the extents' checks are collected, so that every check of the definition stays.
  std::vector<std::pair<const Val*, const Val*>> equal_extents;
  for (const runtime_detail::ExtentEquality& equality : extent_equalities_)
    equal_extents.emplace_back(equality.a, equality.b);
  prepareForScheduling(*fusion_, equal_extents);
  BRAZE_USER_CHECK(options_.runtime_capacity > 0 && options_.plan_capacity > 0)
      << "FusionExecutorCache: runtime_capacity and plan_capacity must be at least 1";
}

FusionExecutorCache::FusionExecutorCache(const Fusion& fusion, ExecutorCacheOptions options)
    : FusionExecutorCache(fusion.clone(), options) {}

FusionExecutorCache::~FusionExecutorCache() = default;

ExecutorCacheCounters FusionExecutorCache::counters() const {
  ExecutorCacheCounters counters;
  counters.runs = runs_;
  counters.hits = hits_;
  counters.heuristic_reuses = heuristic_reuses_;
  counters.misses = misses_;
  counters.kernels_compiled = kernels_compiled_;
  counters.kernels_from_store = kernels_from_store_;
  counters.runtimes_restored = runtimes_restored_;
  counters.compile_seconds = static_cast<double>(compile_microseconds_) * 1e-6;
  counters.evictions = evictions_;
  return counters;
}

size_t FusionExecutorCache::numRuntimes() const {
  std::shared_lock lock(mutex_);
  return runtimes_.size();
}

std::shared_ptr<const FusionKernelRuntime> FusionExecutorCache::lastRuntime() const {
  std::shared_lock lock(mutex_);
  return last_;
}

void FusionExecutorCache::rememberLast(const std::shared_ptr<FusionKernelRuntime>& runtime) {
  std::unique_lock lock(mutex_);
  last_ = runtime;
  last_raw_ = runtime.get();
}

RunContext FusionExecutorCache::contextFor(const std::vector<FusionArgument>& inputs,
                                           const RunOptions& options) const {
  if (options.reference_evaluator) {
    BRAZE_USER_CHECK(std::none_of(
        inputs.begin(), inputs.end(),
        [](const FusionArgument& a) { return std::holds_alternative<DeviceTensor>(a); }))
        << "FusionExecutorCache::run: RunOptions::reference_evaluator runs on the CPU, but the "
           "inputs include device tensors; pass host tensors or leave the option off";
  }
  RunContext context = RunContext::of(*fusion_, inputs);
  if (options.reference_evaluator) {
    context.on_gpu = false;
    context.properties = driver::h100Properties();
  }
  runtime_detail::checkExtentEqualities(extent_equalities_, *context.extents, "the fusion");
  if (std::none_of(inputs.begin(), inputs.end(),
                   [](const FusionArgument& a) { return std::holds_alternative<DeviceTensor>(a); }))
    context.device = options.device;
  // Without a GPU, or for another architecture than the GPU's, schedule for the device the
  // target architecture names (an ahead-of-time build for sm_100 plans for a B200), so that
  // its decisions are the ones that device finds.
  if (options.arch && !(context.on_gpu && context.properties.arch == *options.arch)) {
    if (std::optional<driver::DeviceProperties> target = driver::propertiesForArch(*options.arch))
      context.properties = std::move(*target);
  }
  return context;
}

std::shared_ptr<const FusionKernelRuntime> FusionExecutorCache::prepare(
    const std::vector<FusionArgument>& inputs, const RunOptions& options) {
  RunContext context = contextFor(inputs, options);
  std::vector<FusionArgument> as_run = inputs;
  if (context.on_gpu && std::any_of(inputs.begin(), inputs.end(), [](const FusionArgument& a) {
        return std::holds_alternative<HostTensor>(a);
      })) {
    // A run copies host tensors to fresh allocations on the device first: prepare the runtime
    // of those device tensors (the addresses stand in for fresh, aligned ones).
    for (FusionArgument& argument : as_run) {
      if (const auto* host = std::get_if<HostTensor>(&argument)) {
        argument = DeviceTensor::borrow(host->dtype(), host->sizes(), host->strides(), 256,
                                        options.device, nullptr);
      }
    }
    context = contextFor(as_run, options);
  }
  std::shared_ptr<FusionKernelRuntime> runtime;
  {
    std::lock_guard<std::mutex> build(build_mutex_);
    runtime = runtimeFor(context, runtimeOptionsOf(options),
                         RunKey::signature(as_run, optionsText(options)));
  }
  rememberLast(runtime);
  return runtime;
}

std::vector<FusionArgument> FusionExecutorCache::run(const std::vector<FusionArgument>& inputs,
                                                     const RunOptions& options) {
  BRAZE_USER_CHECK(options.trace == nullptr || !options.cuda_graph)
      << "FusionExecutorCache::run: RunOptions::trace times each launch and copy, but a CUDA "
         "graph replays them as one launch; leave cuda_graph off to trace";
  ++runs_;
  const std::string options_text = optionsText(options);
  RunKey key = RunKey::exact(inputs, options_text);
  std::shared_ptr<PlanEntry> entry;
  {
    std::shared_lock lock(mutex_);
    auto found = plans_.find(key);
    if (found != plans_.end()) entry = found->second;
  }
  if (entry != nullptr && entry->plan != nullptr) {
    // The hit path: one lookup, then the frozen launches.
    entry->last_use = ++clock_;
    ++hits_;
    if (last_raw_.load(std::memory_order_relaxed) != entry->runtime.get())
      rememberLast(entry->runtime);
    return runFrozen(*entry->runtime, *entry->plan, inputs, options);
  }

  // Everything below validates first: a refused run changes nothing.
  RunContext context = contextFor(inputs, options);
  if (options.trace != nullptr) options.trace->spans.clear();
  const bool has_host_tensors =
      std::any_of(inputs.begin(), inputs.end(),
                  [](const FusionArgument& a) { return std::holds_alternative<HostTensor>(a); });
  const RuntimeOptions runtime_options = runtimeOptionsOf(options);
  const RunKey signature = RunKey::signature(inputs, options_text);

  if (!context.on_gpu) {
    // No GPU: the reference evaluator runs each segment (kernels are still compiled, for the
    // target architecture, so a build machine finds what would not compile).
    std::shared_ptr<FusionKernelRuntime> runtime;
    if (entry != nullptr) {
      entry->last_use = ++clock_;
      ++hits_;
      runtime = entry->runtime;
    } else {
      std::lock_guard<std::mutex> build(build_mutex_);
      runtime = runtimeFor(context, runtime_options, signature);
      remember(key, runtime, nullptr);
    }
    rememberLast(runtime);
    std::vector<HostTensor> outputs = runtime->runOnHost(inputs, context);
    return {outputs.begin(), outputs.end()};
  }
  if (has_host_tensors && stagesHostInputs(*fusion_, inputs)) {
    // Through the GPU, the host program copying the inputs (stream loops: slice by slice).
    context.staged_inputs.assign(inputs.size(), false);
    for (size_t i = 0; i < inputs.size(); ++i)
      context.staged_inputs[i] = std::holds_alternative<HostTensor>(inputs[i]);
    std::shared_ptr<FusionKernelRuntime> runtime;
    std::shared_ptr<const ExecutionPlan> plan;
    {
      std::lock_guard<std::mutex> build(build_mutex_);
      runtime = runtimeFor(context, runtime_options, signature);
      plan = runtime->plan(inputs, context);
      remember(key, runtime, plan);
    }
    rememberLast(runtime);
    // The plan copies the results back itself (slice by slice in stream loops).
    return runFrozen(*runtime, *plan, inputs, options);
  }
  if (has_host_tensors) {
    // Through the GPU: copies in, the device path (with its own plans), copies back.
    std::vector<FusionArgument> device_inputs;
    for (const FusionArgument& input : inputs) {
      if (const auto* host = std::get_if<HostTensor>(&input)) {
        device_inputs.emplace_back(DeviceTensor::fromHost(*host, context.device));
      } else {
        device_inputs.push_back(input);
      }
    }
    --runs_;  // the device run counts this call
    std::vector<FusionArgument> outputs = run(device_inputs, options);
    for (FusionArgument& output : outputs) output = std::get<DeviceTensor>(output).toHost();
    // Outputs written in place went into the device copies: write them into the caller's.
    for (size_t i = 0; i < fusion_->outputs().size(); ++i) {
      const Val* input = fusion_->aliasedInput(fusion_->outputs()[i]);
      if (input == nullptr) continue;
      const auto position = static_cast<size_t>(fusion_->inputIndex(input));
      HostTensor into = std::get<HostTensor>(inputs[position]);  // shares the caller's memory
      const auto& result = std::get<HostTensor>(outputs[i]);
      for (int64_t e = 0; e < into.numel(); ++e) into.setFlat(e, result.atFlat(e));
      outputs[i] = into;
    }
    return outputs;
  }

  std::shared_ptr<FusionKernelRuntime> runtime;
  std::shared_ptr<const ExecutionPlan> plan;
  {
    std::lock_guard<std::mutex> build(build_mutex_);
    runtime = runtimeFor(context, runtime_options, signature);
    plan = runtime->plan(inputs, context);
    remember(key, runtime, plan);
  }
  rememberLast(runtime);
  return runFrozen(*runtime, *plan, inputs, options);
}

void FusionExecutorCache::remember(const RunKey& key,
                                   const std::shared_ptr<FusionKernelRuntime>& runtime,
                                   std::shared_ptr<const ExecutionPlan> plan) {
  auto entry = std::make_shared<PlanEntry>();
  entry->runtime = runtime;
  entry->plan = std::move(plan);
  entry->last_use = ++clock_;
  std::unique_lock lock(mutex_);
  plans_[key] = std::move(entry);
  if (plans_.size() > options_.plan_capacity) {
    auto oldest = std::min_element(plans_.begin(), plans_.end(), [](const auto& a, const auto& b) {
      return a.second->last_use < b.second->last_use;
    });
    plans_.erase(oldest);
  }
}

const Fusion& FusionExecutorCache::definitionFor(RunContext& context,
                                                 const RuntimeOptions& options) {
  // A forced scheduler takes the fusion as defined, or refuses it.
  if (!options.scheduler.empty() || !options.segment_schedulers.empty()) return *fusion_;
  std::optional<runtime_detail::StagedContractions> staged =
      runtime_detail::stageContractionOperands(*fusion_, context, registry_);
  if (!staged) return *fusion_;
  auto kept = std::find_if(staged_.begin(), staged_.end(),
                           [&](const auto& entry) { return entry.first == staged->key; });
  if (kept == staged_.end()) {
    staged_.emplace_back(staged->key, std::move(staged->fusion));
    kept = std::prev(staged_.end());
  }
  context = runtime_detail::contextForCopy(context, *kept->second);
  return *kept->second;
}

std::shared_ptr<FusionKernelRuntime> FusionExecutorCache::runtimeFor(RunContext& context,
                                                                     const RuntimeOptions& options,
                                                                     const RunKey& signature) {
  const Fusion& definition = definitionFor(context, options);
  {
    // Most recently used first: the likeliest to serve new sizes of a signature.
    std::vector<RuntimeEntry*> candidates;
    std::shared_lock lock(mutex_);
    for (const auto& entry : runtimes_) {
      if (entry->signature == signature && entry->definition == &definition &&
          entry->options == options)
        candidates.push_back(entry.get());
    }
    lock.unlock();
    std::sort(
        candidates.begin(), candidates.end(),
        [](const RuntimeEntry* a, const RuntimeEntry* b) { return a->last_use > b->last_use; });
    for (RuntimeEntry* entry : candidates) {
      if (entry->runtime->servesWithoutRecompiling(context)) {
        entry->last_use = ++clock_;
        ++heuristic_reuses_;
        return entry->runtime;
      }
    }
  }
  auto runtime = std::make_shared<FusionKernelRuntime>(definition, registry_, context, options);
  ++misses_;
  kernels_compiled_ += static_cast<int64_t>(runtime->kernels().size());
  if (runtime->restoredDecisions()) ++runtimes_restored_;
  for (const FusionKernelRuntime::SegmentKernel& kernel : runtime->kernels()) {
    if (kernel.executor && kernel.executor->compiledKernel().fromStore()) ++kernels_from_store_;
  }
  compile_microseconds_ += static_cast<int64_t>(runtime->compileSeconds() * 1e6);

  std::unique_lock lock(mutex_);
  auto entry = std::make_unique<RuntimeEntry>();
  entry->signature = signature;
  entry->definition = &definition;
  entry->options = options;
  entry->runtime = runtime;
  entry->last_use = ++clock_;
  runtimes_.push_back(std::move(entry));
  while (runtimes_.size() > options_.runtime_capacity) {
    auto oldest =
        std::min_element(runtimes_.begin(), runtimes_.end(),
                         [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
    const FusionKernelRuntime* evicted = (*oldest)->runtime.get();
    std::erase_if(plans_, [&](const auto& item) { return item.second->runtime.get() == evicted; });
    runtimes_.erase(oldest);
    ++evictions_;
  }
  return runtime;
}

}  // namespace braze
