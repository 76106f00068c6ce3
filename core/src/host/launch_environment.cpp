#include "braze/host/launch_environment.h"

#include <charconv>
#include <string_view>

#include "braze/error.h"

namespace braze::host {

namespace {

struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* world_size;
  const char* local_rank;
  // Slurm sets SLURM_NTASKS for a whole allocation (salloc, sbatch), where one process may run
  // alone; only srun's tasks get SLURM_PROCID.
  bool rank_selects_only;
};

// In the order they are checked; see readLaunchEnvironment's comment for why.
constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", false},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     false},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", true},
};

std::optional<std::string> lookup(const std::function<const char*(const char*)>& getenv,
                                  const char* name) {
  const char* value = getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

int64_t parseCount(const char* name, const std::string& value, const char* launcher) {
  int64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, parsed);
  BRAZE_USER_CHECK(error == std::errc{} && stop == end)
      << name << "='" << value << "' is not an integer: " << launcher
      << " sets it to a decimal number; check the launch command or the environment";
  BRAZE_USER_CHECK(parsed >= 0) << name << "='" << value << "' is negative: " << launcher
                                << " sets it to 0 or more; check the launch command or the "
                                   "environment";
  return parsed;
}

LaunchEnvironment readLauncher(const std::function<const char*(const char*)>& getenv,
                               const LauncherVariables& names) {
  const std::optional<std::string> rank = lookup(getenv, names.rank);
  const std::optional<std::string> world_size = lookup(getenv, names.world_size);
  const std::optional<std::string> local_rank = lookup(getenv, names.local_rank);
  for (const auto& [name, value] :
       {std::pair{names.rank, &rank}, std::pair{names.world_size, &world_size},
        std::pair{names.local_rank, &local_rank}}) {
    BRAZE_USER_CHECK(value->has_value())
        << "the " << names.launcher << " environment is incomplete: " << names.rank << "="
        << rank.value_or("(unset)") << ", " << names.world_size << "="
        << world_size.value_or("(unset)") << ", " << names.local_rank << "="
        << local_rank.value_or("(unset)") << ". " << name
        << " is missing; set all three, or none to run as a single process";
  }
  LaunchEnvironment environment;
  environment.launcher = names.launcher;
  environment.rank = parseCount(names.rank, *rank, names.launcher);
  environment.world_size = parseCount(names.world_size, *world_size, names.launcher);
  environment.local_rank = parseCount(names.local_rank, *local_rank, names.launcher);
  BRAZE_USER_CHECK(environment.world_size > 0)
      << names.world_size << "='" << *world_size << "' leaves no process to run: it must be 1 "
      << "or more";
  BRAZE_USER_CHECK(environment.rank < environment.world_size)
      << names.rank << "='" << *rank << "' is not below " << names.world_size << "='" << *world_size
      << "': ranks are 0 .. " << environment.world_size - 1;
  BRAZE_USER_CHECK(environment.local_rank < environment.world_size)
      << names.local_rank << "='" << *local_rank << "' is not below " << names.world_size << "='"
      << *world_size << "': local ranks are 0 .. " << environment.world_size - 1;
  return environment;
}

}  // namespace

LaunchEnvironment readLaunchEnvironment(const std::function<const char*(const char*)>& getenv) {
  LaunchEnvironment environment;
  for (const LauncherVariables& names : kLaunchers) {
    // Any one variable of a set selects its launcher, so that a partial set is reported
    // rather than silently ignored.
    const bool selected = names.rank_selects_only
                              ? lookup(getenv, names.rank).has_value()
                              : lookup(getenv, names.rank) || lookup(getenv, names.world_size) ||
                                    lookup(getenv, names.local_rank);
    if (selected) {
      environment = readLauncher(getenv, names);
      break;
    }
  }
  environment.master_address = lookup(getenv, "MASTER_ADDR");
  if (const std::optional<std::string> port = lookup(getenv, "MASTER_PORT")) {
    const int64_t parsed = parseCount("MASTER_PORT", *port, "the launcher");
    BRAZE_USER_CHECK(parsed >= 1 && parsed <= 65535)
        << "MASTER_PORT='" << *port << "' is not a TCP port: use 1 to 65535";
    environment.master_port = static_cast<int>(parsed);
  }
  return environment;
}

}  // namespace braze::host
