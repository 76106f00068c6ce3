#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

namespace braze::host {

/// Where this process stands among the processes a launcher started, one per GPU.
struct LaunchEnvironment {
  int64_t rank = 0;
  int64_t world_size = 1;
  /// The rank among the processes of this node: the usual choice of CUDA device.
  int64_t local_rank = 0;
  /// "torchrun", "Open MPI", "Slurm" or "single process".
  std::string launcher = "single process";
  /// MASTER_ADDR and MASTER_PORT, where rank 0 serves the store, when set (torchrun sets them;
  /// with mpirun or srun the user does).
  std::optional<std::string> master_address;
  std::optional<int> master_port;
};

/// Reads the launcher's variables through `getenv`, first match wins:
/// - torchrun: RANK, WORLD_SIZE, LOCAL_RANK;
/// - Open MPI (mpirun): OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK;
/// - Slurm (srun): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, selected by SLURM_PROCID alone
///   (salloc and sbatch set SLURM_NTASKS for a process that may run alone);
/// - none of them: rank 0 of 1, "single process".
/// torchrun is checked first because it may run inside an mpirun or srun job, and Open MPI
/// before Slurm for the same reason. An empty variable counts as unset. Throws a braze::Error
/// naming the variable and its value when a value is not a decimal integer, is negative, when a
/// rank is not below the world size, when a launcher's set is incomplete (RANK without
/// WORLD_SIZE), or when MASTER_PORT is not a port (1 to 65535).
LaunchEnvironment readLaunchEnvironment(
    const std::function<const char*(const char*)>& getenv = ::getenv);

}  // namespace braze::host
