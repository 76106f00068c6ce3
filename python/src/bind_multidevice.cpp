// braze.multidevice: device meshes for sharded definitions, spelled as nvFuser's direct
// frontend spells them (DeviceMesh, tv.set_device_mesh, tv.outer_split, ParallelType.mesh_x).

#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <exception>
#include <set>
#include <utility>

#include "bindings.h"
#include "braze/host/collectives.h"
#include "braze/host/communicator.h"
#include "braze/host/launch_environment.h"
#include "braze/host/store.h"
#include "braze/ir/device_mesh.h"
#include "braze/ir/printer.h"
#include "braze/runtime/multidevice_executor.h"

namespace braze::python {

namespace {

/// `outputs` of `device` as Python objects, None for those on a mesh without it (the executor
/// leaves them undefined).
py::list heldResults(const Fusion& fusion, std::vector<FusionArgument> outputs, int64_t device,
                     bool torch) {
  std::vector<bool> held(outputs.size(), true);
  for (size_t o = 0; o < outputs.size() && o < fusion.outputs().size(); ++o) {
    const auto* tv = fusion.outputs()[o]->as<TensorView>();
    if (tv->sharding() && !tv->sharding()->mesh.has(device)) {
      held[o] = false;
      outputs[o] = ScalarValue(int64_t{0});  // converted, then replaced by None
    }
  }
  py::list converted = resultsOf(outputs, torch);
  for (size_t o = 0; o < held.size(); ++o) {
    if (!held[o]) converted[o] = py::none();
  }
  return converted;
}

/// A sharded definition's executor, for checking a sharding on the CPU: every device of its
/// meshes a thread of this process (host::SimulatedMesh), each running its parts.
class SimulatedRun {
 public:
  explicit SimulatedRun(const std::shared_ptr<Fusion>& fusion)
      : executor_(std::make_shared<MultiDeviceExecutor>(*fusion)) {}

  /// Every device of the definition's meshes, in order.
  std::vector<int64_t> devices() const {
    std::set<int64_t> devices;
    for (const TensorView* tv : executor_->fusion().allTensors()) {
      if (!tv->sharding()) continue;
      for (int64_t device : tv->sharding()->mesh.devices()) devices.insert(device);
    }
    return {devices.begin(), devices.end()};
  }

  /// Device `device`'s parts of whole inputs.
  std::vector<FusionArgument> partsFor(const std::vector<FusionArgument>& whole,
                                       int64_t device) const {
    const Fusion& fusion = executor_->fusion();
    BRAZE_USER_CHECK(whole.size() == fusion.inputs().size())
        << "the fusion takes " << fusion.inputs().size() << " inputs but was given "
        << whole.size();
    std::vector<FusionArgument> parts;
    for (size_t i = 0; i < whole.size(); ++i) {
      const auto* host = std::get_if<HostTensor>(&whole[i]);
      if (host == nullptr) {
        BRAZE_USER_CHECK(std::holds_alternative<ScalarValue>(whole[i]))
            << "input " << i << " is on a GPU; a simulated mesh runs NumPy arrays or CPU tensors";
        parts.push_back(whole[i]);
        continue;
      }
      const auto* tv = fusion.inputs()[i]->as<TensorView>();
      // A device outside the input's mesh passes a stand-in of a part's sizes (not read).
      const bool held = !tv->sharding() || tv->sharding()->mesh.has(device);
      parts.emplace_back(
          shardOf(*host, *tv, held ? device : tv->sharding()->mesh.devices().front()));
    }
    return parts;
  }

  /// Each device's outputs (its parts) for whole inputs.
  py::dict simulate(const py::handle& inputs) {
    const std::vector<FusionArgument> whole = argumentsOf(inputs);
    const std::vector<int64_t> devices = this->devices();
    std::vector<std::vector<FusionArgument>> outputs(devices.size());
    std::vector<std::exception_ptr> failures;
    {
      py::gil_scoped_release released;
      host::SimulatedMesh mesh;
      failures = mesh.runEach(devices, [&](int64_t device, host::Collectives& collectives) {
        RunOptions options;
        options.reference_evaluator = true;
        const size_t k = static_cast<size_t>(std::find(devices.begin(), devices.end(), device) -
                                             devices.begin());
        outputs[k] = executor_->run(partsFor(whole, device), collectives, options);
      });
    }
    host::SimulatedMesh::rethrowCause(failures);
    py::dict result;
    const Fusion& fusion = executor_->fusion();
    for (size_t k = 0; k < devices.size(); ++k)
      result[py::int_(devices[k])] = heldResults(fusion, outputs[k], devices[k], false);
    return result;
  }

  py::list parts(const py::handle& inputs, int64_t device) const {
    return resultsOf(partsFor(argumentsOf(inputs), device), /*torch=*/false);
  }

  std::string program() const { return executor_->program().toString(); }
  std::string fusionText() const { return printMath(executor_->fusion()); }

 private:
  std::shared_ptr<MultiDeviceExecutor> executor_;
};

/// A store the caller already has, from Python: any object with `set(key, value)` and
/// `get(key)` on bytes, as torch.distributed's stores (TCPStore, FileStore, the default process
/// group's) have. Under torchrun, torchrun's own store serves MASTER_PORT, so Braze's TCP store
/// cannot: the ranks meet through it instead.
class PythonStore final : public host::Store {
 public:
  explicit PythonStore(py::object store) : store_(std::move(store)) {}
  ~PythonStore() override {
    py::gil_scoped_acquire held;
    store_ = py::object();
  }

  void set(const std::string& key, std::string_view value) override {
    py::gil_scoped_acquire held;
    store_.attr("set")(key, py::bytes(value.data(), value.size()));
  }
  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    py::gil_scoped_acquire held;
    // torch's stores wait for a key in get(), up to their own timeout; a wait() with ours
    // first, where the store has one, makes the wait the one the caller asked for.
    if (py::hasattr(store_, "wait")) {
      try {
        py::object datetime = py::module_::import("datetime");
        store_.attr("wait")(py::list(py::make_tuple(key)),
                            datetime.attr("timedelta")(py::arg("milliseconds") = timeout.count()));
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_TypeError)) throwTimeout(key, timeout);
      }
    }
    try {
      return store_.attr("get")(key).cast<std::string>();
    } catch (py::error_already_set& e) {
      BRAZE_USER_CHECK(false) << "could not get key '" << key << "' from " << describe() << ": "
                              << e.what()
                              << ". Did rank 0 join through the same store, with the same launch?";
    }
    return {};
  }
  std::string describe() const override {
    py::gil_scoped_acquire held;
    return "the store " + py::repr(store_).cast<std::string>();
  }

 private:
  py::object store_;
};

/// This process's rank of an NCCL communicator over every process of the launch (torchrun,
/// mpirun, srun), made on first use: the ranks meet through `store` (a store object from
/// Python), a shared folder (`store_path`), or a TCP store at MASTER_ADDR:MASTER_PORT served
/// by rank 0. Or a PyTorch process group's communicator, borrowed (borrow()).
class PyCommunicator {
 public:
  PyCommunicator(std::optional<std::string> store_path, std::optional<int> device, double timeout_s,
                 py::object store)
      : launch_(host::readLaunchEnvironment()) {
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    if (!store.is_none()) {
      store_ = std::make_unique<PythonStore>(std::move(store));
    } else if (store_path) {
      store_ = std::make_unique<host::FileStore>(*store_path);
    } else if (launch_.world_size == 1 && !launch_.master_address) {
      // One process: a store of its own on a free loopback port.
      store_ = std::make_unique<host::TcpStore>("127.0.0.1", 0, true, timeout);
    } else {
      BRAZE_USER_CHECK(launch_.master_address && launch_.master_port)
          << "rank " << launch_.rank << " of " << launch_.world_size << " (" << launch_.launcher
          << "): set MASTER_ADDR and MASTER_PORT (torchrun sets them), or pass store_path, a "
             "folder every rank can reach";
      store_ = std::make_unique<host::TcpStore>(*launch_.master_address, *launch_.master_port,
                                                launch_.rank == 0, timeout);
    }
    communicator_ = std::make_unique<host::Communicator>(host::Communicator::create(
        launch_, *store_, device.value_or(static_cast<int>(launch_.local_rank)), {timeout}));
    collectives_ = std::make_unique<host::NcclCollectives>(*communicator_);
  }

  /// Borrows `handle`, the ncclComm_t of `owner` (a PyTorch process group, which braze.
  /// multidevice checks and reads: its rank, size and device), without owning it. `owner` is
  /// kept alive as long as this is. The local rank is the launcher's where there is one, else
  /// the device.
  static std::unique_ptr<PyCommunicator> borrow(uintptr_t handle, int64_t rank, int64_t size,
                                                int device, double timeout_s, py::object owner) {
    host::LaunchEnvironment launch = host::readLaunchEnvironment();
    const int64_t local_rank = launch.launcher == "single process" ? device : launch.local_rank;
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    host::Communicator borrowed = host::Communicator::borrow(
        reinterpret_cast<driver::NcclComm>(handle), rank, size, local_rank, device, {timeout});
    return std::unique_ptr<PyCommunicator>(
        new PyCommunicator(std::move(launch), std::move(borrowed), std::move(owner)));
  }

  int64_t rank() const { return communicator_->rank(); }
  int64_t size() const { return communicator_->size(); }
  int64_t localRank() const { return communicator_->localRank(); }
  int device() const { return communicator_->device(); }
  bool borrowed() const { return communicator_->borrowed(); }
  std::string launcher() const { return launch_.launcher; }
  host::NcclCollectives& collectives() { return *collectives_; }
  host::Communicator& communicator() { return *communicator_; }

  // The collectives on raw device pointers and a stream (the Python layer passes torch
  // tensors' pointers and torch's current stream): for measuring the communicator itself.
  void allReduce(uintptr_t send, uintptr_t recv, size_t count, const std::string& dtype) {
    communicator_->allReduce(send, recv, count, dtypeNamed(dtype), host::ReduceOp::Sum, stream_);
  }
  void allGather(uintptr_t send, uintptr_t recv, size_t send_count, const std::string& dtype) {
    communicator_->allGather(send, recv, send_count, dtypeNamed(dtype), stream_);
  }
  void reduceScatter(uintptr_t send, uintptr_t recv, size_t recv_count, const std::string& dtype) {
    communicator_->reduceScatter(send, recv, recv_count, dtypeNamed(dtype), host::ReduceOp::Sum,
                                 stream_);
  }
  void setStream(uintptr_t stream) { stream_ = reinterpret_cast<CUstream>(stream); }
  static constexpr std::pair<const char*, host::AllgatherTransport> kTransports[] = {
      {"auto", host::AllgatherTransport::Auto},
      {"nccl", host::AllgatherTransport::Nccl},
      {"copy_engines", host::AllgatherTransport::CopyEngines}};
  std::string allgatherTransport() const {
    for (const auto& [name, transport] : kTransports)
      if (transport == communicator_->allgatherTransport()) return name;
    return "auto";
  }
  void setAllgatherTransport(const std::string& name) {
    for (const auto& [known, transport] : kTransports) {
      if (known != name) continue;
      communicator_->setAllgatherTransport(transport);
      return;
    }
    BRAZE_USER_CHECK(false) << "allgather_transport: '" << name
                            << "' is not 'auto', 'nccl' or 'copy_engines'";
  }
  int64_t copyEngineAllgathers() const { return communicator_->copyEngineAllgathers(); }
  std::string copyEnginesRefusal() const { return communicator_->copyEnginesRefusal(); }
  void waitFor() {
    py::gil_scoped_release released;
    communicator_->waitFor(stream_);
  }

 private:
  PyCommunicator(host::LaunchEnvironment launch, host::Communicator communicator, py::object owner)
      : launch_(std::move(launch)),
        owner_(std::move(owner)),
        communicator_(std::make_unique<host::Communicator>(std::move(communicator))),
        collectives_(std::make_unique<host::NcclCollectives>(*communicator_)) {}

  static DataType dtypeNamed(const std::string& name) {
    if (name == "float32") return DataType::Float32;
    if (name == "bfloat16") return DataType::BFloat16;
    if (name == "float16") return DataType::Float16;
    BRAZE_USER_CHECK(false) << "Communicator: dtype " << name
                            << " is not one of float32, bfloat16, float16";
    return DataType::Float32;
  }

  host::LaunchEnvironment launch_;
  std::unique_ptr<host::Store> store_;
  /// Declared before the communicator, so that it outlives the borrowed handle's last use.
  py::object owner_ = py::none();
  std::unique_ptr<host::Communicator> communicator_;
  std::unique_ptr<host::NcclCollectives> collectives_;
  CUstream stream_ = nullptr;
};

/// `fd.execute` of a sharded definition: this rank's parts in (CUDA tensors), its parts out.
class ShardedExecutor {
 public:
  explicit ShardedExecutor(const std::shared_ptr<Fusion>& fusion)
      : executor_(std::make_shared<MultiDeviceExecutor>(*fusion)) {}

  py::list execute(const py::handle& inputs, PyCommunicator& communicator) {
    RunArguments run = runArgumentsOf(inputs);
    for (size_t i = 0; i < run.arguments.size(); ++i) {
      BRAZE_USER_CHECK(!std::holds_alternative<HostTensor>(run.arguments[i]))
          << "execute: input " << i << " of a sharded definition is in host memory; pass this "
          << "rank's part on its GPU (cuda:" << communicator.device()
          << "), or check the sharding on the CPU with braze.multidevice.simulate(fd, inputs)";
    }
    RunOptions options;
    options.device = communicator.device();
    options.stream = reinterpret_cast<CUstream>(run.torch_stream);
    options.dump = dumpOptionsOfEnvironment();
    std::vector<FusionArgument> outputs;
    {
      py::gil_scoped_release released;
      outputs = executor_->run(run.arguments, communicator.collectives(), options);
      // Returns with the work enqueued, as torch's own ops do; the watchdog bounds it, so a
      // dead peer ends in an error on the next call instead of a stream that never drains.
      communicator.communicator().watch(options.stream);
    }
    // comm.wait() then waits for this run's stream.
    communicator.setStream(run.torch_stream);
    return heldResults(executor_->fusion(), std::move(outputs), communicator.rank(), run.torch);
  }

  /// Runs as execute() does and returns the timeline: (kind, segment, stream, start_us,
  /// end_us) per region ("launch") and step ("communicate"), from the run's start; stream -1 is
  /// the caller's, k pool stream k.
  py::list trace(const py::handle& inputs, PyCommunicator& communicator) {
    RunArguments run = runArgumentsOf(inputs);
    RunOptions options;
    options.device = communicator.device();
    options.stream = reinterpret_cast<CUstream>(run.torch_stream);
    RunTrace trace;
    options.trace = &trace;
    {
      py::gil_scoped_release released;
      (void)executor_->run(run.arguments, communicator.collectives(), options);
      communicator.communicator().waitFor(options.stream);
    }
    py::list spans;
    for (const RunTrace::Span& span : trace.spans) {
      const char* kind = span.kind == RunTrace::Span::Kind::Communicate ? "communicate" : "launch";
      spans.append(py::make_tuple(kind, span.segment, span.stream, span.start_us, span.end_us));
    }
    return spans;
  }

  std::string program() const { return executor_->program().toString(); }
  std::string describe() const { return executor_->describe(); }

 private:
  std::shared_ptr<MultiDeviceExecutor> executor_;
};

bool isSharded(const std::shared_ptr<Fusion>& fusion) {
  for (const TensorView* tv : fusion->allTensors()) {
    if (tv->sharding()) return true;
    for (const IterDomain* id : tv->loop()) {
      if (id->parallelType() == ParallelType::DIDx || id->parallelType() == ParallelType::DIDy)
        return true;
    }
  }
  return false;
}

}  // namespace

void bindMultidevice(py::module_& m) {
  py::class_<DeviceMesh>(m, "DeviceMesh",
                         "The devices a sharded tensor is spread over: ids in a 1-D or 2-D grid")
      .def(py::init([](std::vector<int64_t> devices, std::optional<std::vector<int64_t>> shape) {
             if (!shape) return DeviceMesh(std::move(devices));
             return DeviceMesh(std::move(devices), std::move(*shape));
           }),
           py::arg("devices"), py::arg("shape") = py::none())
      .def_property_readonly("devices", &DeviceMesh::devices)
      .def_property_readonly("shape", &DeviceMesh::shape)
      .def_property_readonly("size", [](const DeviceMesh& mesh) { return mesh.size(); })
      .def("coordinates_of", &DeviceMesh::coordinatesOf, py::arg("device"))
      .def("__contains__", &DeviceMesh::has)
      .def("__len__", [](const DeviceMesh& mesh) { return mesh.size(); })
      .def("__repr__", &DeviceMesh::toString)
      .def(py::self == py::self);

  py::class_<SimulatedRun>(m, "SimulatedRun",
                           "A sharded definition run on a simulated mesh: every device a thread "
                           "of this process on the reference evaluator")
      .def(py::init<const std::shared_ptr<Fusion>&>(), py::arg("fusion"))
      .def_property_readonly("devices", &SimulatedRun::devices)
      .def("simulate", &SimulatedRun::simulate, py::arg("inputs"),
           "{device: that device's outputs (its parts)} for whole inputs")
      .def("parts", &SimulatedRun::parts, py::arg("inputs"), py::arg("device"),
           "Device `device`'s parts of whole inputs")
      .def("program", &SimulatedRun::program,
           "The host program each device runs: compute regions, communicate and wait")
      .def("fusion_text", &SimulatedRun::fusionText,
           "The definition as it runs: every tensor placed, resharding steps inserted");

  py::class_<PyCommunicator>(m, "Communicator",
                             "This process's rank of an NCCL communicator over every process "
                             "of the launch (torchrun, mpirun, srun)")
      .def(py::init<std::optional<std::string>, std::optional<int>, double, py::object>(),
           py::arg("store_path") = py::none(), py::arg("device") = py::none(),
           py::arg("timeout_s") = 600.0, py::arg("store") = py::none())
      .def_property_readonly("rank", &PyCommunicator::rank)
      .def_property_readonly("size", &PyCommunicator::size)
      .def_property_readonly("local_rank", &PyCommunicator::localRank)
      .def_property_readonly("device", &PyCommunicator::device)
      .def_property_readonly("launcher", &PyCommunicator::launcher)
      .def_property_readonly("borrowed", &PyCommunicator::borrowed,
                             "Whether this is a PyTorch process group's communicator, borrowed "
                             "(braze.multidevice.communicator(process_group=...))")
      .def_static("_borrow", &PyCommunicator::borrow, py::arg("handle"), py::arg("rank"),
                  py::arg("size"), py::arg("device"), py::arg("timeout_s"), py::arg("owner"),
                  "Borrows the ncclComm_t `handle` of `owner` (a process group); "
                  "braze.multidevice.communicator(process_group=...) reads them from the group")
      .def("_all_reduce", &PyCommunicator::allReduce, py::arg("send"), py::arg("recv"),
           py::arg("count"), py::arg("dtype"))
      .def("_all_gather", &PyCommunicator::allGather, py::arg("send"), py::arg("recv"),
           py::arg("send_count"), py::arg("dtype"))
      .def("_reduce_scatter", &PyCommunicator::reduceScatter, py::arg("send"), py::arg("recv"),
           py::arg("recv_count"), py::arg("dtype"))
      .def("_set_stream", &PyCommunicator::setStream, py::arg("stream"))
      .def_property("allgather_transport", &PyCommunicator::allgatherTransport,
                    &PyCommunicator::setAllgatherTransport,
                    "What moves allgathers (of fd.execute's resharding steps and all_gather): "
                    "'auto' (the default: copy engines for the steps of stream loops, which "
                    "overlap compute, NCCL for the others), 'nccl' (NCCL's kernels) or "
                    "'copy_engines' (the GPUs' copy engines writing into memory every rank maps: "
                    "no SM taken, so a transfer overlaps a GEMM; ranks of one host). Set it alike "
                    "on every rank, at the same point")
      .def_property_readonly("copy_engine_allgathers", &PyCommunicator::copyEngineAllgathers,
                             "How many allgathers the copy engines moved so far")
      .def_property_readonly("copy_engines_refusal", &PyCommunicator::copyEnginesRefusal,
                             "Why allgathers asked to use copy engines fell back to NCCL (some "
                             "rank could not map its peers' memory); empty otherwise")
      .def("wait", &PyCommunicator::waitFor,
           "Waits for the work enqueued so far on the stream last used (the last fd.execute's "
           "or collective's); raises (and aborts the communicator) when a peer died or stalled "
           "past the timeout");
  py::class_<ShardedExecutor>(m, "ShardedExecutor",
                              "fd.execute of a sharded definition on this rank's GPU")
      .def(py::init<const std::shared_ptr<Fusion>&>(), py::arg("fusion"))
      .def("execute", &ShardedExecutor::execute, py::arg("inputs"), py::arg("communicator"))
      .def("trace", &ShardedExecutor::trace, py::arg("inputs"), py::arg("communicator"),
           "Runs once and returns each region's and step's (kind, segment, stream, start_us, "
           "end_us)")
      .def("program", &ShardedExecutor::program)
      .def("describe", &ShardedExecutor::describe,
           "Each step, and each compute region's kernels of its last run (segments, schedulers "
           "and their choices)");
  m.def("is_sharded", &isSharded, py::arg("fusion"),
        "Whether the definition places a tensor on a device mesh");
}

}  // namespace braze::python
