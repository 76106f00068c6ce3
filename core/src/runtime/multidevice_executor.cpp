// MultiDeviceExecutor: a sharded definition cut into compute regions and resharding steps, and
// its host program run on one device's parts.

#include "braze/runtime/multidevice_executor.h"

#include <algorithm>
#include <map>
#include <set>

#include "braze/error.h"
#include "braze/eval/argument_binding.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/eval/strided_layout.h"
#include "braze/host/resharding.h"
#include "braze/host/sharding_propagation.h"
#include "braze/host/stream_stages.h"
#include "braze/ir/sharding.h"
#include "braze/ir/stream_axes.h"
#include "braze/ir/tensor_view.h"
#include "runtime/device_program_run.h"
#include "runtime/host_program_run.h"

namespace braze {

namespace {

// A segment of `fusion` as a plain single-device fusion: its tensors keep their shapes (each
// device passes its parts) and lose their shardings.
Segment regionOf(const Fusion& fusion, std::span<const Expr* const> exprs) {
  Segment segment = extractSegment(fusion, exprs);
  for (TensorView* tv : segment.fusion->allTensors()) {
    tv->setSharding(std::nullopt);
    tv->setStreamAxis(std::nullopt);  // the multi-device program runs the loop
  }
  return segment;
}

// The whole tensor's sizes, from a device's part of fusion input `tv` (input `index`).
std::vector<int64_t> globalSizes(const TensorView& tv, std::vector<int64_t> sizes, size_t index,
                                 int64_t device) {
  if (!tv.sharding()) return sizes;
  const Sharding& sharding = *tv.sharding();
  BRAZE_USER_CHECK(sharding.mesh.has(device))
      << "input " << index << " (" << tv.name() << ") lives on " << sharding.mesh.toString()
      << ", which does not hold device " << device << ": run this device with inputs of a "
      << "definition that places them on its mesh";
  for (const ShardedAxis& sharded : sharding.axes) {
    const auto axis = static_cast<size_t>(axisWithoutReductions(tv, sharded.axis));
    if (axis < sizes.size()) sizes[axis] *= sharding.mesh.size(sharded.mesh_dim);
  }
  return sizes;
}

// How many parts each logical extent of `tv` is cut into on a device (1 where whole).
std::vector<std::pair<const Val*, int64_t>> partsPerExtent(const TensorView& tv) {
  std::vector<std::pair<const Val*, int64_t>> parts;
  const std::vector<IterDomain*> logical = tv.logical();
  for (const IterDomain* id : logical) {
    if (!id->isReduction()) parts.emplace_back(id->extent(), 1);
  }
  if (!tv.sharding()) return parts;
  for (const ShardedAxis& sharded : tv.sharding()->axes) {
    const auto axis = static_cast<size_t>(axisWithoutReductions(tv, sharded.axis));
    if (axis < parts.size()) parts[axis].second *= tv.sharding()->mesh.size(sharded.mesh_dim);
  }
  return parts;
}

}  // namespace

HostTensor shardOf(const HostTensor& whole, const TensorView& tensor, int64_t device) {
  if (!tensor.sharding() || tensor.sharding()->axes.empty()) return whole;
  const Sharding& sharding = *tensor.sharding();
  BRAZE_USER_CHECK(sharding.mesh.has(device))
      << tensor.name() << " lives on " << sharding.mesh.toString()
      << ", which does not hold device " << device;
  const std::vector<int64_t> at = sharding.mesh.coordinatesOf(device);
  const std::vector<int64_t> local = localSizes(tensor, whole.sizes());
  HostTensor part = whole;
  for (const ShardedAxis& sharded : sharding.axes) {
    const int64_t axis = axisWithoutReductions(tensor, sharded.axis);
    const int64_t length = local[static_cast<size_t>(axis)];
    part = part.narrowed(axis, at[static_cast<size_t>(sharded.mesh_dim)] * length, length);
  }
  return part.contiguous();
}

MultiDeviceExecutor::MultiDeviceExecutor(const Fusion& definition, ExecutorCacheOptions options,
                                         MultiDeviceOptions multidevice)
    : fusion_(definition.clone()), options_(options) {
  Fusion& fusion = *fusion_;
  BRAZE_USER_CHECK(!takeShardings(fusion).empty())
      << "MultiDeviceExecutor: the definition places no tensor on a device mesh; run it on one "
         "GPU with FusionExecutorCache, or give its tensors meshes (setDeviceMesh)";
  takeStreamAxes(fusion);
  propagateShardings(fusion);
  const int64_t first_new_statement = fusion.numStatements();
  insertResharding(fusion);
  // A resharding step feeding a stream loop runs in it, a slice per iteration: the transfer of
  // one slice overlaps the compute of another.
  host::streamRewrittenProducers(fusion, first_new_statement);
  stages_ = std::make_unique<host::StreamStages>(fusion);

  std::vector<const Expr*> region;
  int32_t region_stage = -1;
  // A region binds each extent once from its inputs' sizes: two inputs cut differently along
  // the same extent (a part and its gathered whole) go to different regions.
  std::map<const Val*, int64_t> region_parts;
  std::set<const Val*> region_computed;
  auto closeRegion = [&] {
    region_parts.clear();
    region_computed.clear();
    if (region.empty()) return;
    segmented_.segments.push_back(regionOf(fusion, region));
    communications_.emplace_back();
    region.clear();
  };
  auto conflictsWithRegion = [&](const Expr& expr) {
    for (const Val* input : expr.inputs()) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr || region_computed.count(tv) != 0) continue;
      for (const auto& [extent, parts] : partsPerExtent(*tv)) {
        const auto found = region_parts.find(extent);
        if (found != region_parts.end() && found->second != parts) return true;
      }
    }
    return false;
  };
  auto addToRegion = [&](const Expr* expr) {
    for (const Val* input : expr->inputs()) {
      const auto* tv = input->dynCast<TensorView>();
      if (tv == nullptr || region_computed.count(tv) != 0) continue;
      for (const auto& [extent, parts] : partsPerExtent(*tv)) region_parts.emplace(extent, parts);
    }
    for (const Val* output : expr->outputs()) region_computed.insert(output);
    region.push_back(expr);
  };
  for (const Expr* expr : fusion.exprs()) {
    if (std::none_of(expr->outputs().begin(), expr->outputs().end(),
                     [](const Val* v) { return v->isA<TensorView>(); }))
      continue;  // scalar Exprs are copied into the regions that need them
    const int32_t stage = stages_->stageOf(*expr);
    std::optional<Communication> step = braze::communicationOf(*expr);
    if (!step) {
      if (stage != region_stage || conflictsWithRegion(*expr)) closeRegion();
      region_stage = stage;
      addToRegion(expr);
      continue;
    }
    closeRegion();
    Segment segment = extractSegment(fusion, std::span<const Expr* const>(&expr, 1));
    segment.scheduler = "communication";
    segmented_.segments.push_back(std::move(segment));
    communications_.push_back(step);
  }
  closeRegion();
  for (size_t s = 0; s < segmented_.segments.size(); ++s)
    segmented_.segments[s].id = static_cast<int64_t>(s);
  segmented_.original = &fusion;
  // Each region's executor cache, made now so that runs on every device share it unlocked.
  for (size_t s = 0; s < segmented_.segments.size(); ++s) {
    regions_.push_back(communications_[s] ? nullptr
                                          : std::make_unique<FusionExecutorCache>(
                                                *segmented_.segments[s].fusion, options_));
  }

  host::HostProgramOptions program_options;
  program_options.streams = multidevice.stream_pool;
  for (const std::optional<Communication>& step : communications_)
    program_options.communications.push_back(step.has_value());
  program_ = host::buildHostProgram(segmented_, stages_->hasLoops() ? stages_.get() : nullptr,
                                    program_options);
}

MultiDeviceExecutor::~MultiDeviceExecutor() = default;

std::optional<Communication> MultiDeviceExecutor::stepOf(int32_t segment) const {
  return communications_.at(static_cast<size_t>(segment));
}

std::vector<FusionArgument> MultiDeviceExecutor::run(const std::vector<FusionArgument>& inputs,
                                                     host::Collectives& collectives,
                                                     const RunOptions& options) {
  const Fusion& fusion = *fusion_;
  const int64_t device = collectives.device();
  BRAZE_USER_CHECK(inputs.size() == fusion.inputs().size())
      << "MultiDeviceExecutor::run: the fusion takes " << fusion.inputs().size()
      << " inputs but was given " << inputs.size();

  // Extents of the whole tensors, for the scalars a region takes (a mean's count over a split
  // axis is the whole axis' length).
  std::vector<ArgumentInfo> whole;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (const auto* scalar = std::get_if<ScalarValue>(&inputs[i])) {
      whole.emplace_back(*scalar);
      continue;
    }
    const auto* tv = fusion.inputs()[i]->as<TensorView>();
    TensorArgumentInfo info;
    if (const auto* host = std::get_if<HostTensor>(&inputs[i])) {
      info = argumentInfoOf(*host);
    } else {
      const auto& device_part = std::get<DeviceTensor>(inputs[i]);
      info = {device_part.dtype(), device_part.sizes(), device_part.strides(),
              device_part.defined(), device_part.describe()};
    }
    info.sizes = globalSizes(*tv, info.sizes, i, device);
    info.strides = contiguousStrides(info.sizes);
    whole.emplace_back(std::move(info));
  }
  ExpressionEvaluator extents;
  validateAndBindArguments(fusion, whole, "MultiDeviceExecutor::run", extents);

  auto regionFor = [&](int32_t segment) -> FusionExecutorCache& {
    return *regions_[static_cast<size_t>(segment)];
  };
  const bool on_host = std::none_of(inputs.begin(), inputs.end(), [](const FusionArgument& a) {
    return std::holds_alternative<DeviceTensor>(a);
  });
  if (on_host) {
    // Slice by slice through the stream loops, as runOnHost runs a single-device program.
    auto launch = [&](const host::LaunchKernel& l, std::vector<EvaluatorArgument> values) {
      std::vector<FusionArgument> arguments;
      for (EvaluatorArgument& value : values) {
        if (auto* tensor = std::get_if<HostTensor>(&value)) {
          arguments.emplace_back(std::move(*tensor));
        } else {
          arguments.emplace_back(std::get<ScalarValue>(value));
        }
      }
      std::vector<HostTensor> results;
      for (FusionArgument& result : regionFor(l.segment).run(arguments, options))
        results.push_back(std::get<HostTensor>(std::move(result)));
      return results;
    };
    auto communicate = [&](const host::Communicate& c, const HostTensor& part) {
      const Communication& step = *communications_[static_cast<size_t>(c.segment)];
      const std::vector<int64_t> team = host::teamOf(step, device);
      if (step.kind != Communication::Kind::LocalSlice) return collectives.run(step, team, part);
      // Every device holds the whole tensor: no transfer.
      const auto position = std::find(team.begin(), team.end(), device) - team.begin();
      return host::combineParts(step, std::vector<HostTensor>(team.size(), part), position);
    };
    std::vector<FusionArgument> outputs;
    for (HostTensor& output :
         runtime_detail::HostProgramRun(program_, inputs, extents, launch, communicate).run())
      outputs.emplace_back(std::move(output));
    return outputs;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    BRAZE_USER_CHECK(!std::holds_alternative<HostTensor>(inputs[i]))
        << "MultiDeviceExecutor::run: input " << i << " ("
        << fusion.inputs()[i]->as<TensorView>()->name()
        << ") is in host memory but others are on the GPU; pass every part on the GPU, or every "
           "part on the host for the simulated mesh";
  }
  // On the GPU: stream loops on the pool streams (a slice's step and compute on one stream,
  // the next slice's on the next), every region through its executor cache.
  auto launch = [&](const host::LaunchKernel& l, const std::vector<FusionArgument>& arguments,
                    const std::vector<DeviceTensor>& into, CUstream stream) {
    RunOptions on = options;
    on.stream = stream;
    on.trace = nullptr;      // the run traces whole regions
    on.outputs_into = into;  // a slice of a loop's buffer is written in place
    std::vector<DeviceTensor> results;
    for (FusionArgument& result : regionFor(l.segment).run(arguments, on))
      results.push_back(std::get<DeviceTensor>(std::move(result)));
    return results;
  };
  auto communicate = [&](const host::Communicate& c, const DeviceTensor& part,
                         const DeviceTensor* into, CUstream stream) {
    const Communication& step = *communications_[static_cast<size_t>(c.segment)];
    return collectives.runOnDevice(step, host::teamOf(step, device), part, stream, into);
  };
  int ordinal = options.device;
  for (const FusionArgument& input : inputs) {
    if (const auto* tensor = std::get_if<DeviceTensor>(&input)) ordinal = tensor->device();
  }
  std::vector<FusionArgument> outputs;
  for (DeviceTensor& output :
       runtime_detail::DeviceProgramRun(program_, inputs, extents, ordinal, options.stream, launch,
                                        communicate, options.trace)
           .run())
    outputs.emplace_back(std::move(output));
  return outputs;
}

}  // namespace braze
