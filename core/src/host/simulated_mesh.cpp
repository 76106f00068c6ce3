// The resharding steps on host tensors (combineParts, teamOf) and SimulatedMesh: N devices in
// one process, each step completed when every device of its team has come.

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>

#include "braze/error.h"
#include "braze/host/collectives.h"

namespace braze::host {
namespace {

// Writes `source` into `target` (a view of the same sizes), element by element.
void copyInto(HostTensor target, const HostTensor& source) {
  for (int64_t i = 0; i < source.numel(); ++i) target.setFlat(i, source.atFlat(i));
}

// `op` on two numbers of one category; max and min of floats propagate nan.
template <typename T>
std::optional<T> combineNumbers(OpKind op, T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if ((op == OpKind::Max || op == OpKind::Min) && (std::isnan(x) || std::isnan(y))) return NAN;
  }
  switch (op) {
    case OpKind::Sum:
      return x + y;
    case OpKind::Prod:
      return x * y;
    case OpKind::Max:
      return std::max(x, y);
    case OpKind::Min:
      return std::min(x, y);
    default:
      return std::nullopt;
  }
}

ScalarValue combine(OpKind op, const ScalarValue& a, const ScalarValue& b) {
  std::optional<ScalarValue> result;
  if (std::holds_alternative<double>(a)) {
    result = combineNumbers(op, std::get<double>(a), toDouble(b));
  } else if (std::holds_alternative<int64_t>(a)) {
    result = combineNumbers(op, std::get<int64_t>(a), toInt64(b));
  } else if (std::optional<int64_t> either =
                 combineNumbers<int64_t>(op == OpKind::Sum    ? OpKind::Max
                                         : op == OpKind::Prod ? OpKind::Min
                                                              : op,
                                         std::get<bool>(a), toBool(b))) {
    result = *either != 0;  // bool: sum and max are "or", prod and min "and"
  }
  BRAZE_INTERNAL_CHECK(result.has_value()) << "a resharding step combines parts with " << op;
  return *result;
}

// The parts put side by side along `axis`.
HostTensor concatenate(const std::vector<HostTensor>& parts, int64_t axis) {
  std::vector<int64_t> sizes = parts.front().sizes();
  const int64_t length = sizes[static_cast<size_t>(axis)];
  sizes[static_cast<size_t>(axis)] *= static_cast<int64_t>(parts.size());
  HostTensor whole = HostTensor::empty(parts.front().dtype(), sizes);
  for (size_t k = 0; k < parts.size(); ++k)
    copyInto(whole.narrowed(axis, static_cast<int64_t>(k) * length, length), parts[k]);
  return whole;
}

// Part `position` of `n` equal parts of `whole` along `axis`, as a dense tensor.
HostTensor partOf(const HostTensor& whole, int64_t axis, int64_t position, int64_t n,
                  const Communication& communication) {
  const int64_t size = whole.size(axis);
  BRAZE_USER_CHECK(size % n == 0) << communication.toString() << ": dim " << axis << " has " << size
                                  << " elements, which do not split into " << n << " equal parts";
  const int64_t length = size / n;
  return whole.narrowed(axis, position * length, length).contiguous();
}

HostTensor reduced(const Communication& communication, const std::vector<HostTensor>& parts) {
  HostTensor total = parts.front().contiguous();
  for (size_t k = 1; k < parts.size(); ++k) {
    for (int64_t i = 0; i < total.numel(); ++i)
      total.setFlat(i, combine(communication.reduction, total.atFlat(i), parts[k].atFlat(i)));
  }
  return total;
}

void checkParts(const Communication& communication, const std::vector<HostTensor>& parts) {
  for (size_t k = 1; k < parts.size(); ++k) {
    BRAZE_USER_CHECK(parts[k].dtype() == parts[0].dtype() && parts[k].sizes() == parts[0].sizes())
        << communication.toString() << ": the devices' parts differ: " << parts[0].describe()
        << " on the first device of the team, " << parts[k].describe() << " on device " << k
        << " of it; every device must pass its part of the same tensor";
  }
}

}  // namespace

namespace {

// `device`'s position in `mesh` (row-major over its dims), or -1 off it.
int64_t positionIn(const DeviceMesh& mesh, int64_t device) {
  const auto found = std::find(mesh.devices().begin(), mesh.devices().end(), device);
  return found == mesh.devices().end() ? -1 : found - mesh.devices().begin();
}

}  // namespace

SendRecvRoles sendRecvRoles(const Communication& communication, int64_t device) {
  BRAZE_INTERNAL_CHECK(communication.kind == Communication::Kind::SendRecv)
      << "sendRecvRoles of " << communication.toString();
  SendRecvRoles roles;
  roles.send_position = positionIn(communication.mesh, device);
  roles.receive_position = positionIn(communication.destination, device);
  if (roles.send_position >= 0)
    roles.send_to = communication.destination.devices()[static_cast<size_t>(roles.send_position)];
  if (roles.receive_position >= 0)
    roles.receive_from = communication.mesh.devices()[static_cast<size_t>(roles.receive_position)];
  return roles;
}

std::optional<HostTensor> Collectives::sendRecv(const Communication& communication,
                                                const HostTensor* part) {
  const SendRecvRoles roles = sendRecvRoles(communication, device());
  if (roles.send_to == device()) {
    BRAZE_INTERNAL_CHECK(part != nullptr) << communication.toString() << " without a part";
    return *part;  // the same position of both meshes: no transfer
  }
  // Each pair (the source's and the destination's device at one position) meets as a team of
  // two; pairs go in position order on every device.
  struct Pair {
    int64_t position;
    bool sends;
  };
  std::vector<Pair> pairs;
  if (roles.send_to) pairs.push_back({roles.send_position, true});
  if (roles.receive_from) pairs.push_back({roles.receive_position, false});
  std::sort(pairs.begin(), pairs.end(),
            [](const Pair& a, const Pair& b) { return a.position < b.position; });
  std::optional<HostTensor> received;
  for (const Pair& pair : pairs) {
    const auto at = static_cast<size_t>(pair.position);
    const std::vector<int64_t> team = {communication.mesh.devices()[at],
                                       communication.destination.devices()[at]};
    if (pair.sends) {
      BRAZE_INTERNAL_CHECK(part != nullptr) << communication.toString() << " without a part";
      (void)run(communication, team, *part);
    } else {
      received = run(communication, team, HostTensor::empty(DataType::Float32, {0}));
    }
  }
  return received;
}

std::vector<int64_t> teamOf(const Communication& communication, int64_t device) {
  BRAZE_INTERNAL_CHECK(communication.kind != Communication::Kind::SendRecv)
      << communication.toString() << ": a send and receive has roles (sendRecvRoles), not a team";
  const DeviceMesh& mesh = communication.mesh;
  const std::vector<int64_t> at = mesh.coordinatesOf(device);
  std::vector<int64_t> team;
  for (int64_t k = 0; k < mesh.size(communication.mesh_dim); ++k) {
    std::vector<int64_t> coordinates = at;
    coordinates[static_cast<size_t>(communication.mesh_dim)] = k;
    int64_t flat = 0;
    for (int64_t d = 0; d < mesh.numDims(); ++d)
      flat = flat * mesh.size(d) + coordinates[static_cast<size_t>(d)];
    team.push_back(mesh.devices()[static_cast<size_t>(flat)]);
  }
  return team;
}

HostTensor combineParts(const Communication& communication, const std::vector<HostTensor>& parts,
                        int64_t position) {
  BRAZE_INTERNAL_CHECK(!parts.empty() && position >= 0 &&
                       position < static_cast<int64_t>(parts.size()))
      << "combineParts: device " << position << " of a team of " << parts.size();
  const auto n = static_cast<int64_t>(parts.size());
  using Kind = Communication::Kind;
  if (communication.kind == Kind::LocalSlice)
    return partOf(parts[static_cast<size_t>(position)], communication.output_axis, position, n,
                  communication);
  // The receiver (position 1) gets the sender's part; the sender keeps nothing.
  if (communication.kind == Kind::SendRecv) return parts.front();
  checkParts(communication, parts);
  switch (communication.kind) {
    case Kind::Allgather:
      return concatenate(parts, communication.input_axis);
    case Kind::Allreduce:
      return reduced(communication, parts);
    case Kind::ReduceScatter:
      return partOf(reduced(communication, parts), communication.output_axis, position, n,
                    communication);
    case Kind::AllToAll: {
      // Device k holds part k along input_axis; this device gets its part along output_axis of
      // each, put side by side along input_axis.
      std::vector<HostTensor> pieces;
      for (const HostTensor& part : parts)
        pieces.push_back(partOf(part, communication.output_axis, position, n, communication));
      return concatenate(pieces, communication.input_axis);
    }
    case Kind::LocalSlice:
    case Kind::SendRecv:
      break;
  }
  return parts.front();
}

// What a device raises when another device's failure aborted the mesh: not the cause.
class MeshAborted : public Error {
 public:
  using Error::Error;
};

struct SimulatedMesh::State {
  struct Step {
    std::vector<std::optional<HostTensor>> parts;
    std::vector<std::optional<HostTensor>> results;
    std::string what;
    size_t taken = 0;
    bool done = false;
  };
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable changed;
  bool aborted = false;
  int64_t steps = 0;
  std::map<std::pair<std::vector<int64_t>, int64_t>, Step> pending;  // by (team, sequence)
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> next;  // by (device, team)
  std::map<int64_t, std::unique_ptr<Device>> devices;
};

class SimulatedMesh::Device : public Collectives {
 public:
  Device(State& state, int64_t device) : state_(state), device_(device) {}
  int64_t device() const override { return device_; }

  HostTensor run(const Communication& communication, const std::vector<int64_t>& team,
                 const HostTensor& input) override {
    auto found = std::find(team.begin(), team.end(), device_);
    BRAZE_INTERNAL_CHECK(found != team.end())
        << "device " << device_ << " runs a step of a team without it";
    const auto position = static_cast<size_t>(found - team.begin());
    std::unique_lock lock(state_.mutex);
    const auto key = std::make_pair(team, state_.next[{device_, team}]++);
    State::Step& step = state_.pending[key];
    if (step.parts.empty()) {
      step.parts.resize(team.size());
      step.what = communication.toString();
    }
    step.parts[position] = input.contiguous();
    if (std::all_of(step.parts.begin(), step.parts.end(),
                    [](const auto& part) { return part.has_value(); })) {
      std::vector<HostTensor> parts;
      for (const auto& part : step.parts) parts.push_back(*part);
      step.results.resize(team.size());
      try {
        for (size_t k = 0; k < team.size(); ++k)
          step.results[k] = combineParts(communication, parts, static_cast<int64_t>(k));
      } catch (...) {
        state_.aborted = true;
        state_.changed.notify_all();
        throw;
      }
      step.done = true;
      ++state_.steps;
      state_.changed.notify_all();
    }
    const bool came =
        state_.changed.wait_for(lock, state_.timeout, [&] { return step.done || state_.aborted; });
    if (!step.done) {
      std::ostringstream missing;
      for (size_t k = 0; k < team.size(); ++k) {
        if (!step.parts[k]) missing << " " << team[k];
      }
      BRAZE_USER_CHECK(came) << "device " << device_ << " waited " << state_.timeout.count()
                             << " ms in " << step.what << " for devices" << missing.str()
                             << ", which never came";
      throw MeshAborted("device " + std::to_string(device_) + " stopped in " + step.what +
                        ": another device's run failed (the simulated mesh was aborted)");
    }
    HostTensor result = *step.results[position];
    if (++step.taken == team.size()) state_.pending.erase(key);
    return result;
  }

 private:
  State& state_;
  int64_t device_;
};

SimulatedMesh::SimulatedMesh(std::chrono::milliseconds timeout)
    : state_(std::make_unique<State>()) {
  state_->timeout = timeout;
}

SimulatedMesh::~SimulatedMesh() = default;

Collectives& SimulatedMesh::device(int64_t device) {
  std::lock_guard lock(state_->mutex);
  std::unique_ptr<Device>& slot = state_->devices[device];
  if (!slot) slot = std::make_unique<Device>(*state_, device);
  return *slot;
}

void SimulatedMesh::abort() {
  std::lock_guard lock(state_->mutex);
  state_->aborted = true;
  state_->changed.notify_all();
}

std::vector<std::exception_ptr> SimulatedMesh::runEach(
    const std::vector<int64_t>& devices,
    const std::function<void(int64_t device, Collectives& collectives)>& body) {
  std::vector<std::exception_ptr> failures(devices.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < devices.size(); ++k) {
    threads.emplace_back([&, k] {
      try {
        body(devices[k], device(devices[k]));
      } catch (...) {
        failures[k] = std::current_exception();
        abort();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return failures;
}

void SimulatedMesh::rethrowCause(const std::vector<std::exception_ptr>& failures) {
  for (const std::exception_ptr& failure : failures) {
    if (!failure) continue;
    try {
      std::rethrow_exception(failure);
    } catch (const MeshAborted&) {
      // Another device's failure stopped this one.
    }
  }
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

int64_t SimulatedMesh::steps() const {
  std::lock_guard lock(state_->mutex);
  return state_->steps;
}

}  // namespace braze::host
