// MultiDeviceExecutor: a sharded definition cut into compute regions and resharding steps, and
// its host program run on one device's parts.

#include "braze/runtime/multidevice_executor.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "braze/error.h"
#include "braze/eval/argument_binding.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/eval/strided_layout.h"
#include "braze/host/communication_layout.h"
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

// The whole tensor's sizes, from a device's part of fusion input `tv` (a device outside its
// mesh passes a stand-in of a part's sizes, whose values are not read).
std::vector<int64_t> globalSizes(const TensorView& tv, std::vector<int64_t> sizes) {
  if (!tv.sharding()) return sizes;
  const Sharding& sharding = *tv.sharding();
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

// Whether `device` takes part in `step`: it is on the step's mesh, or on either end of a send.
bool takesPart(const Communication& step, int64_t device) {
  return step.mesh.has(device) ||
         (step.kind == Communication::Kind::SendRecv && step.destination.has(device));
}

// `fusion`'s exprs with each as early as the steps it depends on allow: first every expr that
// reads no step's result, then the steps that need only those, then what reads one step's
// result, and so on; topological order within each level. Work that needs no step (a
// tensor-parallel backward's weight gradients, beside its input gradient's allreduce) then
// joins the region before the step instead of the one after it, so its intermediates (the
// recomputed forward's fp32 activations) do not cross the cut into memory.
std::vector<const Expr*> stepOrdered(const Fusion& fusion) {
  std::unordered_map<const Val*, int32_t> steps_before;  // steps on the value's longest chain
  // Within a level, each mesh's ops together (in the order the meshes first appear): a region
  // runs on one mesh's devices.
  std::vector<DeviceMesh> meshes;
  const auto meshIndex = [&](const Expr& expr) -> int32_t {
    const auto* tv = expr.outputs().empty() ? nullptr : expr.output(0)->dynCast<TensorView>();
    if (tv == nullptr || !tv->sharding()) return -1;
    const auto found = std::find(meshes.begin(), meshes.end(), tv->sharding()->mesh);
    if (found != meshes.end()) return static_cast<int32_t>(found - meshes.begin());
    meshes.push_back(tv->sharding()->mesh);
    return static_cast<int32_t>(meshes.size()) - 1;
  };
  struct Keyed {
    int32_t level;
    int32_t mesh;
    const Expr* expr;
  };
  std::vector<Keyed> keyed;
  for (const Expr* expr : fusion.exprs()) {
    int32_t level = 0;
    for (const Val* input : expr->inputs()) {
      const auto found = steps_before.find(input);
      if (found != steps_before.end()) level = std::max(level, found->second);
    }
    const bool step = braze::communicationOf(*expr).has_value();
    for (const Val* output : expr->outputs()) steps_before[output] = level + (step ? 1 : 0);
    keyed.push_back({2 * level + (step ? 1 : 0), meshIndex(*expr), expr});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    return a.level != b.level ? a.level < b.level : a.mesh < b.mesh;
  });
  std::vector<const Expr*> ordered;
  ordered.reserve(keyed.size());
  for (const Keyed& k : keyed) ordered.push_back(k.expr);
  return ordered;
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
  BRAZE_USER_CHECK(!takeShardings(fusion, multidevice.steps_on_single_device_dims).empty())
      << "MultiDeviceExecutor: the definition places no tensor on a device mesh; run it on one "
         "GPU with FusionExecutorCache, or give its tensors meshes (setDeviceMesh)";
  takeStreamAxes(fusion);
  propagateShardings(fusion);
  const int64_t first_new_statement = fusion.numStatements();
  insertResharding(fusion);
  // A resharding step feeding a stream loop runs in it, a slice per iteration: the transfer of
  // one slice overlaps the compute of another.
  host::streamRewrittenProducers(fusion, first_new_statement);
  // Parts along an inner axis laid out as blocks, by the kernels on either side of each step.
  layoutCommunicatedBuffers(fusion);
  stages_ = std::make_unique<host::StreamStages>(fusion);

  std::vector<const Expr*> region;
  int32_t region_stage = -1;
  std::optional<DeviceMesh> region_mesh;
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
    const auto* placed = region.front()->output(0)->as<TensorView>();
    region_meshes_.push_back(placed->sharding() ? std::optional(placed->sharding()->mesh)
                                                : std::nullopt);
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
  // Stream loops keep the definition's order: their stages group consecutive exprs.
  std::vector<const Expr*> exprs;
  if (stages_->hasLoops()) {
    for (const Expr* expr : fusion.exprs()) exprs.push_back(expr);
  } else {
    exprs = stepOrdered(fusion);
  }
  for (const Expr* expr : exprs) {
    if (std::none_of(expr->outputs().begin(), expr->outputs().end(),
                     [](const Val* v) { return v->isA<TensorView>(); }))
      continue;  // scalar Exprs are copied into the regions that need them
    const int32_t stage = stages_->stageOf(*expr);
    std::optional<Communication> step = braze::communicationOf(*expr);
    if (!step) {
      const auto* placed = expr->output(0)->dynCast<TensorView>();
      const std::optional<DeviceMesh> mesh = placed != nullptr && placed->sharding()
                                                 ? std::optional(placed->sharding()->mesh)
                                                 : std::nullopt;
      // A region runs on one mesh's devices: another mesh starts another region.
      if (stage != region_stage || conflictsWithRegion(*expr) ||
          (!region.empty() && mesh && region_mesh && *mesh != *region_mesh))
        closeRegion();
      if (region.empty()) region_mesh = mesh;
      region_stage = stage;
      addToRegion(expr);
      continue;
    }
    closeRegion();
    Segment segment = extractSegment(fusion, std::span<const Expr* const>(&expr, 1));
    segment.scheduler = "communication";
    segmented_.segments.push_back(std::move(segment));
    communications_.push_back(step);
    region_meshes_.emplace_back();
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

  std::set<int64_t> devices;
  for (const TensorView* tv : fusion.allTensors()) {
    if (tv->sharding())
      devices.insert(tv->sharding()->mesh.devices().begin(), tv->sharding()->mesh.devices().end());
  }
  devices_.assign(devices.begin(), devices.end());

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

std::string MultiDeviceExecutor::describe() const {
  std::string text;
  for (size_t s = 0; s < segmented_.segments.size(); ++s) {
    if (communications_[s]) {
      text += "segment " + std::to_string(s) + ": " + communications_[s]->toString() + "\n";
      continue;
    }
    text += "segment " + std::to_string(s) + ": compute region\n";
    const std::shared_ptr<const FusionKernelRuntime> runtime = regions_[s]->lastRuntime();
    if (!runtime) {
      text += "  (not run yet)\n";
      continue;
    }
    const std::string kernels = runtime->describe();
    size_t start = 0;
    while (start < kernels.size()) {
      const size_t end = kernels.find('\n', start);
      text += "  " + kernels.substr(start, end - start) + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return text;
}

std::vector<FusionArgument> MultiDeviceExecutor::run(const std::vector<FusionArgument>& inputs,
                                                     host::Collectives& collectives,
                                                     const RunOptions& options) {
  const Fusion& fusion = *fusion_;
  const int64_t device = collectives.device();
  BRAZE_USER_CHECK(inputs.size() == fusion.inputs().size())
      << "MultiDeviceExecutor::run: the fusion takes " << fusion.inputs().size()
      << " inputs but was given " << inputs.size();

  if (!std::binary_search(devices_.begin(), devices_.end(), device)) {
    std::string meshes;
    for (const TensorView* tv : fusion.allTensors()) {
      if (!tv->sharding()) continue;
      const std::string name = tv->sharding()->mesh.toString();
      if (meshes.find(name) == std::string::npos) meshes += (meshes.empty() ? "" : ", ") + name;
    }
    BRAZE_USER_CHECK(false) << "MultiDeviceExecutor::run: device " << device
                            << " is on none of the definition's meshes (" << meshes
                            << "); run it on a device of one of them";
  }
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
    info.sizes = globalSizes(*tv, info.sizes);
    info.strides = contiguousStrides(info.sizes);
    whole.emplace_back(std::move(info));
  }
  ExpressionEvaluator extents;
  validateAndBindArguments(fusion, whole, "MultiDeviceExecutor::run", extents);

  auto regionFor = [&](int32_t segment) -> FusionExecutorCache& {
    return *regions_[static_cast<size_t>(segment)];
  };
  // On several meshes (pipeline stages), this device runs the regions and keeps the tensors of
  // the meshes that hold it.
  runtime_detail::ProgramPlacement placement;
  placement.runs = [&](int32_t segment) {
    const std::optional<DeviceMesh>& mesh = region_meshes_[static_cast<size_t>(segment)];
    return !mesh || mesh->has(device);
  };
  placement.holds = [&](const TensorView& tv) {
    return !tv.sharding() || tv.sharding()->mesh.has(device);
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
    auto communicate = [&](const host::Communicate& c,
                           const HostTensor* part) -> std::optional<HostTensor> {
      const Communication& step = *communications_[static_cast<size_t>(c.segment)];
      if (!takesPart(step, device)) return std::nullopt;  // another stage's step
      // A sender hands its part over; a receiver gets one (a device on both meshes does both).
      if (step.kind == Communication::Kind::SendRecv) return collectives.sendRecv(step, part);
      const std::vector<int64_t> team = host::teamOf(step, device);
      BRAZE_INTERNAL_CHECK(part != nullptr) << step.toString() << " without this device's part";
      if (step.kind != Communication::Kind::LocalSlice) return collectives.run(step, team, *part);
      // Every device holds the whole tensor: no transfer.
      const auto position = std::find(team.begin(), team.end(), device) - team.begin();
      return host::combineParts(step, std::vector<HostTensor>(team.size(), *part), position);
    };
    std::vector<FusionArgument> outputs;
    for (HostTensor& output :
         runtime_detail::HostProgramRun(program_, inputs, extents, launch, communicate, placement)
             .run())
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
  auto communicate = [&](const host::Communicate& c, const DeviceTensor* part,
                         const DeviceTensor* into, CUstream stream,
                         host::Overlap overlap) -> std::optional<DeviceTensor> {
    const Communication& step = *communications_[static_cast<size_t>(c.segment)];
    if (!takesPart(step, device)) {
      collectives.skip(step);  // another stage's step
      return std::nullopt;
    }
    if (step.kind == Communication::Kind::SendRecv)
      return collectives.sendRecvOnDevice(step, part, into, stream);
    const std::vector<int64_t> team = host::teamOf(step, device);
    return collectives.runOnDevice(step, team, part ? *part : DeviceTensor(), stream, into,
                                   overlap);
  };
  int ordinal = options.device;
  for (const FusionArgument& input : inputs) {
    if (const auto* tensor = std::get_if<DeviceTensor>(&input)) ordinal = tensor->device();
  }
  std::vector<FusionArgument> outputs;
  for (DeviceTensor& output :
       runtime_detail::DeviceProgramRun(program_, inputs, extents, ordinal, options.stream, launch,
                                        communicate, options.trace, placement)
           .run())
    outputs.emplace_back(std::move(output));
  return outputs;
}

}  // namespace braze
