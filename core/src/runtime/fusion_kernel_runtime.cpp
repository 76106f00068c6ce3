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
#include "runtime/evaluated_sizes.h"
#include "runtime/thread_pool.h"

namespace braze {
namespace {

constexpr int64_t kInt32Limit = int64_t{1} << 31;
using runtime_detail::evaluatedSizes;

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
    const std::string attempts =
        registry_.choose(*segment.fusion, info_(segment)).describeAttempts();
    return attempts.empty() ? registry_.describeNoneAvailable() : attempts;
  }

 private:
  std::function<SchedulerRuntimeInfo(const Segment&)> info_;
  const SchedulerRegistry& registry_;
  const std::set<size_t>& unbuildable_;
};

}  // namespace

namespace runtime_detail {

std::vector<int64_t> evaluatedSizes(const TensorView& tv, ExpressionEvaluator& extents) {
  std::vector<int64_t> sizes;
  for (const IterDomain* id : tv.logicalNoReductions()) {
    sizes.push_back(toInt64(extents.evaluateOrThrow(
        id->logicalExtent(), "extent of " + tv.name() + " (an intermediate between segments)")));
  }
  return sizes;
}

}  // namespace runtime_detail

bool RuntimeOptions::operator==(const RuntimeOptions& other) const {
  return scheduler == other.scheduler && segment_schedulers == other.segment_schedulers &&
         arch == other.arch && stream_pool == other.stream_pool;
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

FusionKernelRuntime::FusionKernelRuntime(const Fusion& fusion, const SchedulerRegistry& registry,
                                         const RunContext& context, RuntimeOptions options)
    : fusion_(fusion), registry_(registry), options_(std::move(options)) {
  const std::vector<TensorView*> tensors = fusion.allTensors();
  if (std::any_of(tensors.begin(), tensors.end(),
                  [](const TensorView* tv) { return tv->streamAxis().has_value(); }))
    stages_ = std::make_unique<host::StreamStages>(fusion);
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
      BRAZE_USER_CHECK(!stages_ || stages_->stages().size() == 1)
          << "FusionExecutorCache: scheduler " << options_.scheduler << " is forced for the "
          << "whole fusion, but its stream axes split it into " << stages_->stages().size()
          << " stages that run apart:\n"
          << stages_->toString() << "Force schedulers per segment instead";
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
      if (stages_) {
        segmenter_options.stage_of = [this](const Expr& expr) { return stages_->stageOf(expr); };
      }
      segmented_ = segmentFusion(fusion, checker, segmenter_options);
    }
    BRAZE_USER_CHECK(options_.segment_schedulers.size() <= segmented_.segments.size())
        << "FusionExecutorCache: " << options_.segment_schedulers.size()
        << " schedulers forced per segment, but the fusion has " << segmented_.segments.size()
        << " segments:\n"
        << segmented_.toString();
    program_ = host::buildHostProgram(
        segmented_, stages_.get(),
        host::HostProgramOptions{options_.stream_pool,
                                 context.staged_inputs,
                                 {},
                                 /*host_results=*/!context.staged_inputs.empty()});

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
  SchedulerRuntimeInfo info = segmentRuntimeInfo(fusion_, segment, context);
  const int32_t stage = stages_ && !segment.outputs.empty()
                            ? stages_->stageOf(*segment.outputs.front()->definition())
                            : -1;
  if (stage < 0 || !stages_->stages()[static_cast<size_t>(stage)].loop) return info;
  // A stream loop's kernel is built for one iteration's slices: the first (longest) one.
  const int64_t extent = toInt64(
      context.extents->evaluateOrThrow(stages_->extentOf(stage), "the extent of a stream loop"));
  const int64_t length =
      std::min(stages_->stages()[static_cast<size_t>(stage)].slicing.sliceLength(extent), extent);
  const host::LoopSegmentInputs reads = host::loopSegmentInputs(segment, *stages_, stage);
  for (size_t i = 0; i < segment.inputs.size(); ++i) {
    if (reads.slice_length[i]) {
      info.arguments[i] = ScalarValue(length);
    } else if (reads.sliced_axis[i]) {
      auto& tensor = std::get<TensorArgumentInfo>(info.arguments[i]);
      const auto axis = static_cast<size_t>(*reads.sliced_axis[i]);
      tensor.sizes[axis] = length;
      // Slices start at multiples of one slice's bytes: aligned no better than that.
      const int64_t step = length * tensor.strides[axis] * sizeInBytes(tensor.dtype);
      if (step > 0) {
        int64_t& alignment = info.data_alignments[i];
        alignment = std::min(alignment, step & -step);
      }
    }
  }
  return info;
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
    os << ")";
    // The name profilers show for it.
    if (kernel.executor) os << ", kernel " << kernel.executor->generatedKernel().kernel_name;
    os << "\n";
  }
  return os.str();
}

}  // namespace braze
