// Schedulers by name from Python: whether one takes a fusion (and why not), which ones do, the
// params one would choose, and the fusion it schedules. Each asks about the fusion as
// fd.execute hands it to the schedulers (prepareForScheduling), not as it was defined: an
// nvFuser-style layer norm's Welford and expands are rewritten first, and a scheduler that
// takes the rewritten fusion must not be reported as refusing it.

#include <pybind11/stl.h>

#include "bindings.h"
#include "braze/error.h"
#include "braze/plugin/scheduler_registry.h"
#include "braze/runtime/fusion_executor_cache.h"
#include "braze/runtime/fusion_kernel_runtime.h"
#include "braze/runtime/prepare_for_scheduling.h"
#include "braze/sched/schedule_printer.h"

namespace braze::python {

namespace {

/// The runtime info of `inputs` (host or device tensors, numbers) on this machine's device.
SchedulerRuntimeInfo infoOf(const Fusion& fusion, const std::vector<FusionArgument>& arguments) {
  const RunContext context = RunContext::of(fusion, arguments);
  SchedulerRuntimeInfo info;
  info.arguments = context.arguments;
  info.data_alignments = context.data_alignments;
  info.device = context.properties;
  return info;
}

}  // namespace

void bindSched(py::module_& m) {
  m.def(
      "can_schedule",
      [](const Fusion& defined, const std::string& name, const py::object& inputs) {
        const SchedulerRegistry& registry = defaultSchedulerRegistry();
        const SchedulerEntry& entry = registry.find(name);
        const std::unique_ptr<Fusion> prepared = prepareCopyForScheduling(defined);
        const Fusion& fusion = *prepared;
        if (inputs.is_none()) {
          std::optional<std::string> declined = registry.checkCompileTime(entry, fusion);
          return py::make_tuple(!declined.has_value(), declined.value_or(""));
        }
        const SchedulerChoice choice =
            registry.chooseWith(entry, fusion, infoOf(fusion, argumentsOf(inputs)));
        return py::make_tuple(choice.accepted(), choice.describeAttempts());
      },
      py::arg("fusion"), py::arg("name"), py::arg("inputs") = py::none(),
      "(accepted, reason): the structural check alone, or with inputs every check and the "
      "heuristics");
  m.def(
      "find_compatible_schedulers",
      [](const Fusion& defined, const py::object& inputs) {
        const SchedulerRegistry& registry = defaultSchedulerRegistry();
        const std::unique_ptr<Fusion> prepared = prepareCopyForScheduling(defined);
        const Fusion& fusion = *prepared;
        std::optional<SchedulerRuntimeInfo> info;
        if (!inputs.is_none()) info = infoOf(fusion, argumentsOf(inputs));
        std::vector<std::string> names;
        for (const SchedulerEntry* entry : registry.candidates()) {
          const bool accepts = info ? registry.chooseWith(*entry, fusion, *info).accepted()
                                    : !registry.checkCompileTime(*entry, fusion).has_value();
          if (accepts) names.push_back(entry->id + "@" + entry->version);
        }
        return names;
      },
      py::arg("fusion"), py::arg("inputs") = py::none(),
      "The schedulers that take the whole fusion, in the order they are tried");
  m.def(
      "compute_heuristics",
      [](const Fusion& defined, const std::string& name, const py::sequence& inputs) {
        const SchedulerRegistry& registry = defaultSchedulerRegistry();
        const std::unique_ptr<Fusion> prepared = prepareCopyForScheduling(defined);
        const Fusion& fusion = *prepared;
        const SchedulerChoice choice =
            registry.choose(fusion, infoOf(fusion, argumentsOf(inputs)), name);
        BRAZE_USER_CHECK(choice.accepted())
            << "compute_heuristics: " << name
            << " does not take the fusion:" << choice.describeAttempts();
        py::dict d;
        d["scheduler"] = choice.scheduler->id + "@" + choice.scheduler->version;
        d["params"] =
            py::bytes(reinterpret_cast<const char*>(choice.params.data()), choice.params.size());
        py::list fields;
        for (const SchedulerParamField& field : registry.paramFields(*choice.scheduler))
          fields.append(py::make_tuple(field.name, field.kind, field.offset));
        d["fields"] = fields;
        return d;
      },
      py::arg("fusion"), py::arg("name"), py::arg("inputs"),
      "The params `name` chooses for these inputs: scheduler, params bytes and their fields "
      "(name, kind, byte offset) as the plugin describes them");
  m.def(
      "describe_params",
      [](const std::string& scheduler, const py::bytes& params) {
        const SchedulerRegistry& registry = defaultSchedulerRegistry();
        const std::string bytes = params;
        return registry.describeParams(registry.find(scheduler),
                                       std::vector<uint8_t>(bytes.begin(), bytes.end()));
      },
      py::arg("scheduler"), py::arg("params"),
      "The scheduler's one-line summary of params bytes (an error when it cannot read them)");
  m.def(
      "schedule_with_params",
      [](const Fusion& defined, const std::string& scheduler, const py::bytes& params) {
        const SchedulerRegistry& registry = defaultSchedulerRegistry();
        const std::unique_ptr<Fusion> prepared = prepareCopyForScheduling(defined);
        const Fusion& fusion = *prepared;
        SchedulerChoice choice;
        choice.scheduler = &registry.find(scheduler);
        const std::string bytes = params;
        choice.params.assign(bytes.begin(), bytes.end());
        const std::optional<std::string> declined =
            registry.checkCompileTime(*choice.scheduler, fusion);
        BRAZE_USER_CHECK(!declined)
            << "schedule: " << scheduler << " does not take the fusion: " << declined.value_or("");
        std::unique_ptr<Fusion> scheduled = registry.applySchedule(choice, fusion);
        return printSchedule(*scheduled);
      },
      py::arg("fusion"), py::arg("scheduler"), py::arg("params"),
      "The fusion as `scheduler` schedules it with these (edited) params, printed");
  m.def(
      "schedule",
      [](const Fusion& defined, const std::string& name, const py::sequence& inputs) {
        const SchedulerRegistry& registry = defaultSchedulerRegistry();
        const std::unique_ptr<Fusion> prepared = prepareCopyForScheduling(defined);
        const Fusion& fusion = *prepared;
        const SchedulerChoice choice =
            registry.choose(fusion, infoOf(fusion, argumentsOf(inputs)), name);
        BRAZE_USER_CHECK(choice.accepted())
            << "schedule: " << name << " does not take the fusion:" << choice.describeAttempts();
        std::unique_ptr<Fusion> scheduled = registry.applySchedule(choice, fusion);
        return printSchedule(*scheduled);
      },
      py::arg("fusion"), py::arg("name"), py::arg("inputs"),
      "The fusion as `name` schedules it for these inputs, printed (loop domains, parallel "
      "types, memory types)");
}

}  // namespace braze::python
