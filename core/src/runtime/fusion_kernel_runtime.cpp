// A fusion's segmentation, schedules and kernels for a family of argument signatures, and the
// frozen plans that run them.

#include "braze/runtime/fusion_kernel_runtime.h"
#include "braze/runtime/kernel_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "braze/codegen/codegen.h"
#include "braze/driver/cuda_driver.h"
#include "braze/driver/device_memory.h"
#include "braze/driver/nvrtc_compiler.h"
#include "braze/driver/primary_context.h"
#include "braze/eval/argument_binding.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/eval/reference_evaluator.h"
#include "braze/eval/strided_layout.h"
#include "braze/ir/printer.h"
#include "braze/ir/structural_hash.h"
#include "braze/sched/schedule_printer.h"
#include "braze/segment/segmented_fusion_dot.h"
#include "runtime/thread_pool.h"

namespace braze {
namespace {

using Kind = KernelParameter::Kind;
using host::SlotKind;
using host::ValueRef;

constexpr int64_t kInt32Limit = int64_t{1} << 31;
// Where planning pretends buffers live: aligned like every pool allocation.
constexpr CUdeviceptr kPlanningPointer = 256;

std::vector<int64_t> evaluatedSizes(const TensorView& tv, ExpressionEvaluator& extents) {
  std::vector<int64_t> sizes;
  for (const IterDomain* id : tv.logicalNoReductions()) {
    sizes.push_back(toInt64(extents.evaluateOrThrow(
        id->logicalExtent(), "extent of " + tv.name() + " (an intermediate between segments)")));
  }
  return sizes;
}

/// An output written into an input must have the input's sizes for this run.
void checkAliasedSizes(const std::string& output, const std::vector<int64_t>& output_sizes,
                       const std::vector<int64_t>& input_sizes, const std::string& input) {
  auto text = [](const std::vector<int64_t>& sizes) {
    std::string t = "[";
    for (size_t i = 0; i < sizes.size(); ++i) t += (i ? ", " : "") + std::to_string(sizes[i]);
    return t + "]";
  };
  BRAZE_USER_CHECK(output_sizes == input_sizes)
      << "output " << output << " is written into input " << input << " in place, but it has "
      << "sizes " << text(output_sizes) << " for these arguments and " << input << " has "
      << text(input_sizes) << "; pass inputs for which they agree";
}

/// The bytes of `tv` for this run's sizes, or nullopt when an extent is unknown.
std::optional<int64_t> bytesOf(const TensorView& tv, ExpressionEvaluator& extents) {
  int64_t numel = 1;
  for (const IterDomain* id : tv.logicalNoReductions()) {
    std::optional<ScalarValue> extent = extents.evaluate(id->logicalExtent());
    if (!extent) return std::nullopt;
    numel *= toInt64(*extent);
  }
  return numel * sizeInBytes(tv.dtype());
}

/// Int64 indexing when some tensor of the run could overflow Int32 offsets.
DataType indexTypeFor(const Fusion& fusion, const RunContext& context) {
  for (const TensorView* tv : fusion.allTensors()) {
    int64_t numel = 1;
    for (const IterDomain* id : tv->logicalNoReductions()) {
      std::optional<ScalarValue> extent = context.extents->evaluate(id->logicalExtent());
      if (!extent) break;
      numel *= std::max<int64_t>(toInt64(*extent), 1);
      if (numel >= kInt32Limit) return DataType::Int64;
    }
  }
  for (const ArgumentInfo& argument : context.arguments) {
    const auto* tensor = std::get_if<TensorArgumentInfo>(&argument);
    if (tensor == nullptr) continue;
    int64_t span = 1;
    for (size_t d = 0; d < tensor->sizes.size(); ++d)
      span += std::max<int64_t>(tensor->sizes[d] - 1, 0) * tensor->strides[d];
    if (span >= kInt32Limit) return DataType::Int64;
  }
  return DataType::Int32;
}

/// Asks the registry about candidate segments with the sizes of this run.
class RegistryChecker final : public SegmentChecker {
 public:
  RegistryChecker(std::function<SchedulerRuntimeInfo(const Segment&)> info,
                  const SchedulerRegistry& registry, const std::set<size_t>& unbuildable)
      : info_(std::move(info)), registry_(registry), unbuildable_(unbuildable) {}
  std::optional<std::string> accepts(const Segment& segment) override {
    // A segment some scheduler accepted but none could lower or compile: split it instead.
    if (unbuildable_.count(structuralHash(*segment.fusion)) != 0) return std::nullopt;
    SchedulerChoice choice = registry_.choose(*segment.fusion, info_(segment));
    if (!choice.accepted()) return std::nullopt;
    return choice.scheduler->id + "@" + choice.scheduler->version;
  }
  std::string refusalReason(const Segment& segment) override {
    return registry_.choose(*segment.fusion, info_(segment)).describeAttempts();
  }

 private:
  std::function<SchedulerRuntimeInfo(const Segment&)> info_;
  const SchedulerRegistry& registry_;
  const std::set<size_t>& unbuildable_;
};

size_t alignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

bool RuntimeOptions::operator==(const RuntimeOptions& other) const {
  return scheduler == other.scheduler && segment_schedulers == other.segment_schedulers &&
         arch == other.arch;
}

RunContext RunContext::of(const Fusion& fusion, const std::vector<FusionArgument>& arguments) {
  RunContext context;
  context.extents = std::make_shared<ExpressionEvaluator>();
  std::optional<size_t> first_device_tensor;
  std::optional<size_t> first_host_tensor;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const FusionArgument& argument = arguments[i];
    const std::string input_name =
        i < fusion.inputs().size() ? " (" + fusion.inputs()[i]->name() + ")" : "";
    if (const auto* device = std::get_if<DeviceTensor>(&argument)) {
      context.arguments.emplace_back(device->argumentInfo());
      const CUdeviceptr data = device->data();
      context.data_alignments.push_back(
          data == 0 ? 16 : std::min<int64_t>(16, static_cast<int64_t>(data & (~data + 1))));
      if (!first_device_tensor) {
        first_device_tensor = i;
        context.device = device->device();
      }
      BRAZE_USER_CHECK(device->device() == context.device)
          << "FusionExecutorCache::run: input " << i << input_name
          << " is on cuda:" << device->device() << " but input " << *first_device_tensor
          << " is on cuda:" << context.device
          << "; a fusion runs on one device: move the inputs to one device";
    } else if (const auto* host = std::get_if<HostTensor>(&argument)) {
      context.arguments.emplace_back(argumentInfoOf(*host));
      context.data_alignments.push_back(16);  // copied to a fresh device allocation
      if (!first_host_tensor) first_host_tensor = i;
    } else {
      context.arguments.emplace_back(std::get<ScalarValue>(argument));
      context.data_alignments.push_back(0);
    }
  }
  BRAZE_USER_CHECK(!(first_device_tensor && first_host_tensor))
      << "FusionExecutorCache::run: input " << *first_device_tensor
      << " is a device tensor but input " << *first_host_tensor
      << " is a host tensor; pass all tensors on the device or all on the host";
  validateAndBindArguments(fusion, context.arguments, "FusionExecutorCache::run", *context.extents);
  for (const auto& [output, input] : fusion.outputAliases()) {
    const auto* tensor = std::get_if<TensorArgumentInfo>(
        &context.arguments[static_cast<size_t>(fusion.inputIndex(input))]);
    if (tensor == nullptr) continue;  // refused above
    checkAliasedSizes(output->name(), evaluatedSizes(*output->as<TensorView>(), *context.extents),
                      tensor->sizes, input->name());
  }
  std::string no_gpu;
  context.on_gpu = driver::isDriverAvailable(&no_gpu);
  if (first_device_tensor) {
    BRAZE_USER_CHECK(context.on_gpu) << "FusionExecutorCache::run: the inputs are device "
                                        "tensors but no GPU can be used: "
                                     << no_gpu;
  }
  context.properties =
      context.on_gpu ? driver::deviceProperties(context.device) : driver::h100Properties();
  return context;
}

std::vector<DeviceTensor> ExecutionPlan::outputTensors(
    const std::vector<FusionArgument>& arguments,
    std::span<const std::shared_ptr<driver::DeviceMemory>> memory) const {
  std::vector<DeviceTensor> tensors;
  tensors.reserve(outputs.size());
  for (const host::ValueRef& ref : outputs) {
    if (ref.kind == host::SlotKind::Input) {
      tensors.push_back(std::get<DeviceTensor>(arguments[static_cast<size_t>(ref.index)]));
      continue;
    }
    const Buffer& buffer = buffers[static_cast<size_t>(ref.index)];
    const std::shared_ptr<driver::DeviceMemory>& block = memory[static_cast<size_t>(ref.index)];
    tensors.push_back(DeviceTensor::borrow(buffer.dtype, buffer.sizes, buffer.strides,
                                           block ? block->pointer() : 0, device, block));
  }
  return tensors;
}

CUdeviceptr ExecutionPlan::workspaceFor(CUstream stream) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [owner, memory] : workspaces_) {
    if (owner == stream) return memory->pointer();
  }
  // Not stream-ordered: the stream may be gone when the plan is evicted.
  std::shared_ptr<driver::DeviceMemory> memory =
      driver::DeviceMemory::allocate(device, workspace_bytes);
  BRAZE_CU(memsetD8Async, memory->pointer(), 0, workspace_bytes, stream);
  workspaces_.emplace_back(stream, memory);
  return memory->pointer();
}

FusionKernelRuntime::FusionKernelRuntime(const Fusion& fusion, const SchedulerRegistry& registry,
                                         const RunContext& context, RuntimeOptions options)
    : fusion_(fusion), registry_(registry), options_(std::move(options)) {
  auto info = [&](const Segment& segment) { return segmentInfo(segment, context); };
  // A warm process takes the segmentation and choices an earlier one made for these arguments.
  const std::shared_ptr<DecisionStore> store = defaultDecisionStore();
  keep_recipes_ = store != nullptr;
  device_ = context.device;
  std::string decisions_key;
  std::optional<RuntimeDecisions> stored;
  if (store) {
    decisions_key = runtimeKey(fusion, context, options_);
    if ((stored = store->find(decisions_key))) {
      if (std::optional<std::string> stale = restore(*stored, context)) {
        std::cerr << "braze: decisions kept for this fusion no longer apply (" << *stale
                  << "); segmenting and scheduling again\n";
      }
    }
  }
  // Segments some scheduler accepted but none could build, found below: segmented again
  // without them until every kernel compiles.
  std::set<size_t> unbuildable;
  while (true) {
    if (!restored_ && !options_.scheduler.empty()) {
      // The user's word for the whole fusion: one segment, or an error saying why not.
      const std::vector<Expr*> all = fusion.exprs();
      const std::vector<const Expr*> exprs(all.begin(), all.end());
      segmented_.original = &fusion;
      segmented_.segments.push_back(extractSegment(fusion, exprs));
    } else if (!restored_) {
      RegistryChecker checker(info, registry, unbuildable);
      SegmenterOptions segmenter_options;
      // Merges keep the largest intermediates on chip: their real sizes, for these inputs.
      segmenter_options.tensor_bytes = [&](const TensorView& tv) {
        return bytesOf(tv, *context.extents);
      };
      segmented_ = segmentFusion(fusion, checker, segmenter_options);
    }
    BRAZE_USER_CHECK(options_.segment_schedulers.size() <= segmented_.segments.size())
        << "FusionExecutorCache: " << options_.segment_schedulers.size()
        << " schedulers forced per segment, but the fusion has " << segmented_.segments.size()
        << " segments:\n"
        << segmented_.toString();
    program_ = host::buildHostProgram(segmented_);

    const DataType index_type = indexTypeFor(fusion, context);
    kernels_.resize(segmented_.segments.size());
    for (size_t s = 0; s < kernels_.size() && !restored_; ++s) {
      SchedulerChoice choice = chooseFor(s, context);
      const std::string forced =
          s < options_.segment_schedulers.size() && !options_.segment_schedulers[s].empty()
              ? options_.segment_schedulers[s]
              : options_.scheduler;
      BRAZE_USER_CHECK(choice.accepted())
          << "FusionExecutorCache: no scheduler accepted "
          << (segmented_.segments.size() == 1 ? std::string("the fusion")
                                              : "segment " + std::to_string(s))
          << (forced.empty() ? "" : " (forced: " + forced + ")") << "." << choice.describeAttempts()
          << "\n"
          << printMath(*segmented_.segments[s].fusion)
          << "Install a scheduler for it, or check BRAZE_SCHEDULERS and the forced schedulers.";
      kernels_[s].choice = std::move(choice);
    }

    if (options_.dump.segments) options_.dump.out() << "=== segments\n" << describe();
    if (options_.dump.host_ir) options_.dump.out() << "=== host program\n" << program_.toString();
    if (options_.dump.segments_dot) writeSegmentsDot(context);

    const driver::GpuArch arch = options_.arch    ? *options_.arch
                                 : context.on_gpu ? driver::deviceProperties(context.device).arch
                                                  : driver::GpuArch{9, 0, false};
    // Scheduling, lowering and NVRTC of each segment are independent: one task per segment.
    std::vector<std::string> uncompiled(kernels_.size());
    runParallel(kernels_.size(), options_.compile_threads, [&](size_t s) {
      // A scheduler that accepted a segment but whose schedule fails to lower or compile is
      // reported and the next scheduler that accepts the segment is tried, unless one was forced.
      SegmentKernel& kernel = kernels_[s];
      if (restored_ && kernel.recipe) {
        std::string why;
        if (restoreKernel(s, arch, index_type, why)) return;
        if (!why.empty())
          std::cerr << "braze: the kept kernel of segment " << s << " does not serve (" << why
                    << "); scheduling and compiling it again\n";
      }
      const bool forced = !options_.scheduler.empty() || (s < options_.segment_schedulers.size() &&
                                                          !options_.segment_schedulers[s].empty());
      std::vector<SchedulerAttempt> failures;
      const std::vector<const SchedulerEntry*> order = registry_.candidates();
      auto next = std::find(order.begin(), order.end(), kernel.choice.scheduler);
      while (true) {
        try {
          compileSegment(s, context, arch, index_type);
          return;
        } catch (const Error& error) {
          failures.push_back({kernel.choice.scheduler->id + "@" + kernel.choice.scheduler->version,
                              kernel.choice.scheduler->path, "schedule, lower and compile", true,
                              error.what()});
          // Kept decisions that do not build (params a rebuilt plugin kept but can no longer
          // read) are dropped below and the fusion planned again, forced or not.
          if (restored_) {
            uncompiled[s] = "segment " + std::to_string(s) + ": " + error.what();
            return;
          }
          if (forced || next == order.end()) throw;
        }
        SchedulerChoice retry;
        for (++next; next != order.end() && !retry.accepted(); ++next)
          retry = registry_.chooseWith(**next, *segmented_.segments[s].fusion,
                                       segmentInfo(segmented_.segments[s], context));
        if (!retry.accepted()) {
          SchedulerChoice failed;
          failed.attempts = failures;
          uncompiled[s] = "FusionExecutorCache: segment " + std::to_string(s) +
                          " has no scheduler whose kernel compiles:" + failed.describeAttempts();
          return;
        }
        --next;
        retry.attempts.insert(retry.attempts.begin(), failures.begin(), failures.end());
        kernel.choice = std::move(retry);
      }
    });
    const auto failed = std::find_if(uncompiled.begin(), uncompiled.end(),
                                     [](const std::string& why) { return !why.empty(); });
    if (failed == uncompiled.end()) break;
    if (restored_) {
      std::cerr << "braze: the decisions kept for this fusion do not build (" << *failed
                << "); segmenting and scheduling again\n";
      restored_ = false;
      segmented_ = SegmentedFusion{};
      program_ = host::HostProgram{};
      kernels_.clear();
      continue;
    }
    // A segment some scheduler accepted but none could lower or compile. Segmenting again
    // without it splits its Exprs otherwise: a scheduler's mistake costs speed, not the run.
    const Segment& segment = segmented_.segments[static_cast<size_t>(failed - uncompiled.begin())];
    const bool may_split = !restored_ && options_.scheduler.empty() &&
                           options_.segment_schedulers.empty() && segment.exprs.size() > 1 &&
                           unbuildable.insert(structuralHash(*segment.fusion)).second;
    if (!may_split) BRAZE_THROW() << *failed;
    segmented_ = SegmentedFusion{};
    program_ = host::HostProgram{};
    kernels_.clear();
  }
  // Kept again when anything differs from what was kept: a first build, a segment scheduled
  // again, a scheduler that ruled on its old params.
  if (store) {
    RuntimeDecisions made = decisions();
    if (!restored_ || !stored || made != *stored) store->insert(decisions_key, made);
  }
}

bool FusionKernelRuntime::restoreKernel(size_t s, const driver::GpuArch& arch, DataType index_type,
                                        std::string& why) {
  const auto start = std::chrono::steady_clock::now();
  SegmentKernel& kernel = kernels_[s];
  const KernelRecipe& recipe = *kernel.recipe;
  if (recipe.index_type != index_type) {
    why = "it indexes with " + std::string(toString(recipe.index_type)) +
          ", these arguments need " + std::string(toString(index_type));
    return false;
  }
  const std::shared_ptr<KernelStore> store = defaultKernelStore();
  std::optional<CompiledKernel> compiled = store ? store->find(recipe.kernel_key) : std::nullopt;
  if (!compiled) return false;  // pruned or never kept: compiled again, nothing to report
  driver::GpuArch expected_arch = arch;
  expected_arch.arch_specific = recipe.arch_specific;
  if (compiled->kernelName() != recipe.kernel_name || !(compiled->arch() == expected_arch) ||
      compiled->nvrtcVersion() != driver::nvrtcVersion()) {
    why = "the stored kernel is " + compiled->kernelName() + " for " + compiled->arch().toString() +
          " from NVRTC " + std::to_string(compiled->nvrtcVersion().first) + "." +
          std::to_string(compiled->nvrtcVersion().second);
    return false;
  }
  try {
    std::unique_ptr<Fusion> segment = segmented_.segments[s].fusion->clone();
    GeneratedKernel generated = rebuildKernel(recipe, *segment, compiled->source());
    ExecutorOptions executor_options;
    executor_options.device = device_;
    executor_options.dump = options_.dump;
    if (options_.dump.cuda_kernel)
      options_.dump.out() << "=== CUDA of segment " << s << " (kept)\n" << generated.source;
    kernel.executor = std::make_unique<KernelExecutor>(*segment, std::move(generated),
                                                       std::move(*compiled), executor_options);
    kernel.scheduled = std::move(segment);
  } catch (const Error& error) {
    why = error.what();
    return false;
  }
  kernel.from_recipe = true;
  kernel.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

void FusionKernelRuntime::compileSegment(size_t s, const RunContext& context,
                                         const driver::GpuArch& arch, DataType index_type) {
  const auto start = std::chrono::steady_clock::now();
  SegmentKernel& kernel = kernels_[s];
  kernel.scheduled = registry_.applySchedule(kernel.choice, *segmented_.segments[s].fusion);
  const DumpOptions& dump = options_.dump;
  if (dump.scheduled)
    dump.out() << "=== schedule of segment " << s << "\n" << printSchedule(*kernel.scheduled);
  LowerOptions lower_options;
  lower_options.index_type = index_type;
  lower_options.dump_lowering = dump.lowering;
  lower_options.dump_stream = dump.stream;
  GeneratedKernel generated = generateCuda(*kernel.scheduled, lower_options);
  if (dump.cuda_kernel) dump.out() << "=== CUDA of segment " << s << "\n" << generated.source;
  CompileOptions compile_options;
  compile_options.arch = arch;
  if (generated.arch_specific) compile_options.arch->arch_specific = true;
  compile_options.dump = dump;
  compile_options.store = defaultKernelStore();
  CompiledKernel compiled =
      CompiledKernel::compile(generated.source, generated.kernel_name, compile_options);
  kernel.recipe.reset();
  if (keep_recipes_) {
    std::variant<KernelRecipe, std::string> recipe =
        recordKernelRecipe(generated, *kernel.scheduled,
                           kernelKey(compiled.source(), compiled.kernelName(),
                                     compiled.nvrtcOptions(), compiled.nvrtcVersion()));
    if (auto* kept = std::get_if<KernelRecipe>(&recipe)) kernel.recipe = std::move(*kept);
  }
  ExecutorOptions executor_options;
  executor_options.device = context.device;
  executor_options.dump = dump;
  kernel.executor = std::make_unique<KernelExecutor>(*kernel.scheduled, std::move(generated),
                                                     std::move(compiled), executor_options);
  kernel.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

FusionKernelRuntime::~FusionKernelRuntime() = default;

SchedulerRuntimeInfo segmentRuntimeInfo(const Fusion& fusion, const Segment& segment,
                                        const RunContext& context) {
  SchedulerRuntimeInfo info;
  info.device = context.properties;
  for (const Val* input : segment.inputs) {
    const int64_t position = fusion.inputIndex(input);
    if (position >= 0) {
      info.arguments.push_back(context.arguments[static_cast<size_t>(position)]);
      info.data_alignments.push_back(context.data_alignments[static_cast<size_t>(position)]);
    } else if (const auto* tv = input->dynCast<TensorView>()) {
      TensorArgumentInfo tensor;
      tensor.dtype = tv->dtype();
      tensor.sizes = evaluatedSizes(*tv, *context.extents);
      tensor.strides = denseStrides(tensor.sizes, tv->allocationOrder());
      tensor.description = tv->name() + " (written by an earlier segment)";
      info.arguments.emplace_back(std::move(tensor));
      info.data_alignments.push_back(16);
    } else {
      info.arguments.emplace_back(
          context.extents->evaluateOrThrow(input, "extent " + input->name() + " of a segment"));
      info.data_alignments.push_back(0);
    }
  }
  return info;
}

SchedulerRuntimeInfo FusionKernelRuntime::segmentInfo(const Segment& segment,
                                                      const RunContext& context) const {
  return segmentRuntimeInfo(fusion_, segment, context);
}

SchedulerChoice FusionKernelRuntime::chooseFor(size_t s, const RunContext& context) const {
  const Segment& segment = segmented_.segments[s];
  const std::string& forced =
      s < options_.segment_schedulers.size() && !options_.segment_schedulers[s].empty()
          ? options_.segment_schedulers[s]
          : options_.scheduler;
  return registry_.choose(*segment.fusion, segmentInfo(segment, context), forced);
}

bool FusionKernelRuntime::servesWithoutRecompiling(const RunContext& context) const {
  if (indexTypeFor(fusion_, context) != kernels_.front().executor->generatedKernel().index_type)
    return false;
  for (size_t s = 0; s < kernels_.size(); ++s) {
    const SchedulerChoice choice = chooseFor(s, context);
    if (!choice.accepted() || choice.scheduler != kernels_[s].choice.scheduler ||
        choice.params != kernels_[s].choice.params) {
      return false;
    }
  }
  return true;
}

void FrozenLaunch::Pointer::patch(std::vector<std::byte>& parameters, CUdeviceptr address) const {
  if (!tensor_map) {
    std::memcpy(parameters.data() + offset, &address, sizeof(address));
    return;
  }
  CUtensorMap map;  // the driver wants it 64-byte aligned, which the packed bytes need not be
  std::memcpy(&map, parameters.data() + offset, sizeof(map));
  if (std::all_of(std::begin(map.opaque), std::end(map.opaque),
                  [](auto word) { return word == 0; }))
    return;
  driver::checkDriver(
      driver::driverApi().tensorMapReplaceAddress(&map, reinterpret_cast<void*>(address)),
      "cuTensorMapReplaceAddress", "while re-addressing a tensor map parameter");
  std::memcpy(parameters.data() + offset, &map, sizeof(map));
}

std::shared_ptr<const ExecutionPlan> FusionKernelRuntime::plan(
    const std::vector<FusionArgument>& arguments, const RunContext& context) const {
  auto plan = std::make_shared<ExecutionPlan>();
  plan->device = context.device;
  plan->buffers.resize(static_cast<size_t>(program_.num_buffers));
  std::vector<int64_t> extent_values;
  for (const Val* extent : program_.extents)
    extent_values.push_back(toInt64(context.extents->evaluateOrThrow(extent, "extent")));

  auto planningArgument = [&](const ValueRef& ref) -> ExecutorArgument {
    switch (ref.kind) {
      case SlotKind::Input: {
        const FusionArgument& argument = arguments[static_cast<size_t>(ref.index)];
        if (const auto* scalar = std::get_if<ScalarValue>(&argument)) return *scalar;
        return std::get<DeviceTensor>(argument);
      }
      case SlotKind::Buffer: {
        const ExecutionPlan::Buffer& buffer = plan->buffers[static_cast<size_t>(ref.index)];
        return DeviceTensor::borrow(buffer.dtype, buffer.sizes, buffer.strides, kPlanningPointer,
                                    context.device, nullptr);
      }
      case SlotKind::Extent:
        return ScalarValue(extent_values[static_cast<size_t>(ref.index)]);
    }
    return ScalarValue(int64_t{0});
  };

  for (const host::Instruction& instruction : program_.instructions) {
    if (const auto* allocate = std::get_if<host::Allocate>(&instruction)) {
      ExecutionPlan::Buffer& buffer = plan->buffers[static_cast<size_t>(allocate->buffer)];
      buffer.dtype = allocate->dtype;
      buffer.sizes = evaluatedSizes(*allocate->tensor, *context.extents);
      // Dense in the tensor's allocation order (row-major unless stride_order gave another):
      // the order the kernel that writes it computes its offsets in.
      buffer.strides = denseStrides(buffer.sizes, allocate->tensor->allocationOrder());
      buffer.bytes = static_cast<size_t>(numelOf(buffer.sizes) * sizeInBytes(buffer.dtype));
      buffer.alias_input = allocate->alias_input;
      if (buffer.alias_input >= 0) {
        continue;  // the input's memory (sizes checked in RunContext::of): nothing to allocate
      }
      plan->steps.push_back({ExecutionPlan::Step::Kind::Allocate, allocate->buffer, 0});
    } else if (const auto* deallocate = std::get_if<host::Deallocate>(&instruction)) {
      plan->steps.push_back({ExecutionPlan::Step::Kind::Deallocate, deallocate->buffer, 0});
    } else {
      const auto& launch = std::get<host::LaunchKernel>(instruction);
      KernelExecutor& executor = *kernels_[static_cast<size_t>(launch.segment)].executor;
      const GeneratedKernel& generated = executor.generatedKernel();
      std::vector<ExecutorArgument> inputs;
      for (const ValueRef& ref : launch.inputs) inputs.push_back(planningArgument(ref));
      const LaunchPlan launch_plan = executor.plan(inputs);
      std::vector<DeviceTensor> outputs;
      for (int32_t buffer : launch.outputs) {
        outputs.push_back(std::get<DeviceTensor>(planningArgument({SlotKind::Buffer, buffer})));
      }
      std::vector<CUdeviceptr> allocations(generated.parameters.size(), kPlanningPointer);
      KernelArguments packed = executor.packArguments(launch_plan, inputs, outputs, allocations);

      FrozenLaunch frozen;
      frozen.launch = launch_plan.launch;
      frozen.parameters.assign(packed.storage().begin(), packed.storage().end());
      for (size_t i = 0; i < generated.parameters.size(); ++i) {
        const KernelParameter& p = generated.parameters[i];
        const size_t offset = packed.offset(i);
        frozen.parameter_offsets.push_back(offset);
        const auto position = static_cast<size_t>(p.fusion_position);
        switch (p.kind) {
          case Kind::InputTensor:
          case Kind::InputTensorMap:
            frozen.pointers.push_back(
                {offset, launch.inputs[position], p.kind == Kind::InputTensorMap});
            break;
          case Kind::OutputTensor:
          case Kind::OutputTensorMap: {
            const ValueRef buffer{SlotKind::Buffer, launch.outputs[position]};
            BRAZE_INTERNAL_CHECK(p.kind == Kind::OutputTensorMap ||
                                 launch_plan.parameters[i].sizes ==
                                     plan->buffers[static_cast<size_t>(buffer.index)].sizes)
                << "segment " << launch.segment << " output " << position
                << ": the kernel computes other sizes than the original fusion";
            const int32_t alias = plan->buffers[static_cast<size_t>(buffer.index)].alias_input;
            frozen.pointers.push_back({offset,
                                       alias >= 0 ? ValueRef{SlotKind::Input, alias} : buffer,
                                       p.kind == Kind::OutputTensorMap});
            break;
          }
          case Kind::GlobalBuffer:
            frozen.temporaries.push_back(
                {offset, static_cast<size_t>(numelOf(launch_plan.parameters[i].sizes) *
                                             sizeInBytes(p.dtype))});
            break;
          case Kind::Workspace:
            frozen.workspaces.push_back({offset, plan->workspace_bytes});
            plan->workspace_bytes =
                alignUp(plan->workspace_bytes +
                            static_cast<size_t>(launch_plan.parameters[i].workspace_bytes),
                        256);
            break;
          case Kind::InputScalar:
            break;
        }
      }
      if (launch_plan.launch.isEmpty()) {
        for (size_t j = 0; j < outputs.size(); ++j) {
          BRAZE_USER_CHECK(outputs[j].numel() == 0)
              << "segment " << launch.segment << " launches no threads for these inputs ("
              << launch_plan.launch.toString() << ") but its output " << j
              << " has elements it would leave unwritten; inputs with zero-size dims need "
                 "another schedule for this fusion";
        }
      } else {
        frozen.function = executor.prepareLaunch(launch_plan);
      }
      plan->steps.push_back(
          {ExecutionPlan::Step::Kind::Launch, 0, static_cast<int32_t>(plan->launches.size())});
      plan->launches.push_back(std::move(frozen));
    }
  }
  plan->outputs = program_.outputs;
  return plan;
}

std::vector<DeviceTensor> FusionKernelRuntime::run(const ExecutionPlan& plan,
                                                   const std::vector<FusionArgument>& arguments,
                                                   CUstream stream) const {
  driver::makePrimaryContextCurrent(plan.device);
  const driver::DriverApi& api = driver::driverApi();
  // Scratch reused by every run on this thread: the hit path allocates no bookkeeping.
  thread_local std::vector<std::shared_ptr<driver::DeviceMemory>> buffers;
  thread_local std::vector<std::byte> parameters;
  thread_local std::vector<void*> parameter_pointers;
  thread_local std::vector<std::shared_ptr<driver::DeviceMemory>> temporaries;
  buffers.assign(plan.buffers.size(), nullptr);
  auto pointerOf = [&](const ValueRef& ref) -> CUdeviceptr {
    if (ref.kind == SlotKind::Buffer) {
      const auto& memory = buffers[static_cast<size_t>(ref.index)];
      return memory ? memory->pointer() : 0;
    }
    return std::get<DeviceTensor>(arguments[static_cast<size_t>(ref.index)]).data();
  };
  CUdeviceptr workspace = plan.workspace_bytes > 0 ? plan.workspaceFor(stream) : 0;
  for (const ExecutionPlan::Step& step : plan.steps) {
    switch (step.kind) {
      case ExecutionPlan::Step::Kind::Allocate:
        buffers[static_cast<size_t>(step.buffer)] = driver::DeviceMemory::allocateOnStream(
            plan.device, plan.buffers[static_cast<size_t>(step.buffer)].bytes, stream);
        break;
      case ExecutionPlan::Step::Kind::Deallocate:
        buffers[static_cast<size_t>(step.buffer)].reset();
        break;
      case ExecutionPlan::Step::Kind::Launch: {
        const FrozenLaunch& launch = plan.launches[static_cast<size_t>(step.launch)];
        if (launch.function == nullptr) break;  // no threads, nothing to write
        parameters.assign(launch.parameters.begin(), launch.parameters.end());
        auto patch = [&](size_t offset, CUdeviceptr pointer) {
          std::memcpy(parameters.data() + offset, &pointer, sizeof(pointer));
        };
        for (const FrozenLaunch::Pointer& pointer : launch.pointers)
          pointer.patch(parameters, pointerOf(pointer.source));
        for (const FrozenLaunch::Temporary& temporary : launch.temporaries) {
          temporaries.push_back(
              driver::DeviceMemory::allocateOnStream(plan.device, temporary.bytes, stream));
          patch(temporary.offset, temporaries.back()->pointer());
        }
        for (const FrozenLaunch::Workspace& region : launch.workspaces)
          patch(region.parameter_offset, workspace + region.block_offset);
        parameter_pointers.resize(launch.parameter_offsets.size());
        for (size_t i = 0; i < launch.parameter_offsets.size(); ++i)
          parameter_pointers[i] = parameters.data() + launch.parameter_offsets[i];
        DriverLaunchConfig launch_config(launch.launch, stream);
        const CUresult result = api.launchKernelEx(&launch_config.config, launch.function,
                                                   parameter_pointers.data(), nullptr);
        if (result != CUDA_SUCCESS) {
          driver::checkDriver(result, "cuLaunchKernelEx",
                              "while launching the kernel of segment " +
                                  std::to_string(step.launch) + " with " +
                                  launch.launch.toString());
        }
        temporaries.clear();  // freed in stream order, after the launch
        break;
      }
    }
  }
  std::vector<DeviceTensor> outputs = plan.outputTensors(arguments, buffers);
  buffers.clear();  // the outputs keep theirs; intermediates were freed by Deallocate
  return outputs;
}

std::vector<HostTensor> FusionKernelRuntime::runOnHost(const std::vector<FusionArgument>& arguments,
                                                       const RunContext& context) const {
  std::vector<std::optional<HostTensor>> buffers(static_cast<size_t>(program_.num_buffers));
  std::vector<int32_t> alias_input(buffers.size(), -1);
  for (const host::Instruction& instruction : program_.instructions) {
    if (const auto* allocate = std::get_if<host::Allocate>(&instruction))
      alias_input[static_cast<size_t>(allocate->buffer)] = allocate->alias_input;
  }
  auto valueOf = [&](const ValueRef& ref) -> EvaluatorArgument {
    switch (ref.kind) {
      case SlotKind::Input: {
        const FusionArgument& argument = arguments[static_cast<size_t>(ref.index)];
        if (const auto* scalar = std::get_if<ScalarValue>(&argument)) return *scalar;
        return std::get<HostTensor>(argument);
      }
      case SlotKind::Buffer:
        return *buffers[static_cast<size_t>(ref.index)];
      case SlotKind::Extent:
        return context.extents->evaluateOrThrow(program_.extents[static_cast<size_t>(ref.index)],
                                                "extent");
    }
    return ScalarValue(int64_t{0});
  };
  for (const host::Instruction& instruction : program_.instructions) {
    if (const auto* deallocate = std::get_if<host::Deallocate>(&instruction)) {
      buffers[static_cast<size_t>(deallocate->buffer)].reset();
      continue;
    }
    const auto* launch = std::get_if<host::LaunchKernel>(&instruction);
    if (launch == nullptr) continue;  // the evaluator allocates its own outputs
    std::vector<EvaluatorArgument> inputs;
    for (const ValueRef& ref : launch->inputs) inputs.push_back(valueOf(ref));
    // The kernel a GPU would launch must take these sizes: refused here as it would be there.
    if (const KernelExecutor* executor =
            kernels_[static_cast<size_t>(launch->segment)].executor.get()) {
      std::vector<ArgumentInfo> infos;
      for (const EvaluatorArgument& input : inputs) {
        if (const auto* tensor = std::get_if<HostTensor>(&input)) {
          infos.emplace_back(argumentInfoOf(*tensor));
        } else {
          infos.emplace_back(std::get<ScalarValue>(input));
        }
      }
      ExpressionEvaluator scalars;
      executor->checkArguments(infos, scalars);
    }
    std::vector<EvaluatorArgument> results =
        evaluateFusion(*segmented_.segments[static_cast<size_t>(launch->segment)].fusion, inputs);
    for (size_t j = 0; j < launch->outputs.size(); ++j) {
      const auto buffer = static_cast<size_t>(launch->outputs[j]);
      buffers[buffer] = std::get<HostTensor>(results[j]);
      if (alias_input[buffer] >= 0) {
        // Written in place: into the input the caller passed, as a device run writes it.
        const auto position = static_cast<size_t>(alias_input[buffer]);
        HostTensor into = std::get<HostTensor>(arguments[position]);  // shares the memory
        for (int64_t i = 0; i < into.numel(); ++i) into.setFlat(i, buffers[buffer]->atFlat(i));
      }
    }
  }
  std::vector<HostTensor> outputs;
  for (const ValueRef& ref : program_.outputs)
    outputs.push_back(std::get<HostTensor>(valueOf(ref)));
  return outputs;
}

void FusionKernelRuntime::writeSegmentsDot(const RunContext& context) const {
  DotAnnotations annotations;
  annotations.segment_lines = [&](const Segment& segment) {
    const SchedulerChoice& choice = kernels_[static_cast<size_t>(segment.id)].choice;
    return std::vector<std::string>{choice.summary};
  };
  annotations.tensor_bytes = [&](const TensorView& tv) { return bytesOf(tv, *context.extents); };
  std::filesystem::path folder = options_.dump.folder;
  if (folder.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    folder = std::filesystem::path(tmp != nullptr ? tmp : "/tmp") / "braze" / "dump";
  }
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  // One file per runtime: the definition's hash and a count of the runtimes made so far.
  static std::atomic<int64_t> count{0};
  std::ostringstream name;
  name << "segments_" << std::hex << structuralHash(fusion_) << std::dec << "_" << count++
       << ".dot";
  const std::filesystem::path path = folder / name.str();
  std::ofstream file(path);
  file << toDot(segmented_, annotations);
  options_.dump.out() << "=== segments graph: "
                      << (file ? path.string() : "not written (" + path.string() + ")") << "\n";
}

std::string FusionKernelRuntime::explain() const {
  std::istringstream lines(describe());
  std::ostringstream os;
  std::string line;
  for (size_t s = 0; std::getline(lines, line); ++s) {
    os << line << "\n";
    for (const SchedulerAttempt& attempt : kernels_[s].choice.attempts) {
      os << "  " << attempt.scheduler << " " << (attempt.error ? "failed" : "declined") << " at "
         << attempt.stage << ": " << attempt.message << "\n";
    }
  }
  return os.str();
}

double FusionKernelRuntime::compileSeconds() const {
  double total = 0;
  for (const SegmentKernel& kernel : kernels_) total += kernel.compile_seconds;
  return total;
}

std::string FusionKernelRuntime::describe() const {
  std::ostringstream os;
  for (size_t s = 0; s < segmented_.segments.size(); ++s) {
    const Segment& segment = segmented_.segments[s];
    const SegmentKernel& kernel = kernels_[s];
    os << "segment " << s << ": ";
    if (kernel.choice.accepted()) {
      os << kernel.choice.scheduler->id << "@" << kernel.choice.scheduler->version << " ("
         << kernel.choice.summary << ")";
    } else {
      os << "no scheduler";
    }
    os << ", reads (";
    for (size_t i = 0; i < segment.inputs.size(); ++i)
      os << (i ? ", " : "") << segment.inputs[i]->name();
    os << "), writes (";
    for (size_t i = 0; i < segment.outputs.size(); ++i)
      os << (i ? ", " : "") << segment.outputs[i]->name();
    os << ")\n";
  }
  return os.str();
}

}  // namespace braze
