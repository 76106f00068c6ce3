// Reading rank, world size and local rank from each launcher's variables, and the message of
// every mistake, through a fake environment.

#include "braze/host/launch_environment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/error_matchers.h"

namespace braze::host {
namespace {

using Variables = std::map<std::string, std::string>;

LaunchEnvironment readFrom(const Variables& variables) {
  return readLaunchEnvironment([&](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

void expectLaunch(const LaunchEnvironment& launch, int64_t rank, int64_t world_size,
                  int64_t local_rank, const std::string& launcher) {
  EXPECT_EQ(launch.rank, rank);
  EXPECT_EQ(launch.world_size, world_size);
  EXPECT_EQ(launch.local_rank, local_rank);
  EXPECT_EQ(launch.launcher, launcher);
}

TEST(LaunchEnvironmentTest, NoLauncherIsRankZeroOfOne) {
  const LaunchEnvironment launch = readFrom({});
  expectLaunch(launch, 0, 1, 0, "single process");
  EXPECT_FALSE(launch.master_address.has_value());
  EXPECT_FALSE(launch.master_port.has_value());
}

TEST(LaunchEnvironmentTest, Torchrun) {
  const LaunchEnvironment launch = readFrom({{"RANK", "5"},
                                             {"WORLD_SIZE", "8"},
                                             {"LOCAL_RANK", "1"},
                                             {"MASTER_ADDR", "node0"},
                                             {"MASTER_PORT", "29500"}});
  expectLaunch(launch, 5, 8, 1, "torchrun");
  EXPECT_EQ(launch.master_address, "node0");
  EXPECT_EQ(launch.master_port, 29500);
}

TEST(LaunchEnvironmentTest, OpenMpi) {
  expectLaunch(readFrom({{"OMPI_COMM_WORLD_RANK", "3"},
                         {"OMPI_COMM_WORLD_SIZE", "4"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}),
               3, 4, 3, "Open MPI");
}

TEST(LaunchEnvironmentTest, Slurm) {
  const LaunchEnvironment launch =
      readFrom({{"SLURM_PROCID", "6"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "2"}});
  expectLaunch(launch, 6, 16, 2, "Slurm");
  EXPECT_FALSE(launch.master_address.has_value());
}

TEST(LaunchEnvironmentTest, MasterAddressAndPortAreReadForEveryLauncher) {
  const LaunchEnvironment launch = readFrom({{"SLURM_PROCID", "0"},
                                             {"SLURM_NTASKS", "2"},
                                             {"SLURM_LOCALID", "0"},
                                             {"MASTER_ADDR", "10.0.0.7"},
                                             {"MASTER_PORT", "1234"}});
  EXPECT_EQ(launch.master_address, "10.0.0.7");
  EXPECT_EQ(launch.master_port, 1234);
}

TEST(LaunchEnvironmentTest, TorchrunInsideASlurmJobIsTorchrun) {
  expectLaunch(readFrom({{"RANK", "1"},
                         {"WORLD_SIZE", "2"},
                         {"LOCAL_RANK", "1"},
                         {"SLURM_PROCID", "0"},
                         {"SLURM_NTASKS", "1"},
                         {"SLURM_LOCALID", "0"}}),
               1, 2, 1, "torchrun");
}

TEST(LaunchEnvironmentTest, MpirunInsideASlurmJobIsOpenMpi) {
  expectLaunch(readFrom({{"OMPI_COMM_WORLD_RANK", "2"},
                         {"OMPI_COMM_WORLD_SIZE", "4"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                         {"SLURM_PROCID", "0"},
                         {"SLURM_NTASKS", "1"},
                         {"SLURM_LOCALID", "0"}}),
               2, 4, 0, "Open MPI");
}

TEST(LaunchEnvironmentTest, SlurmAllocationWithoutSrunIsOneProcess) {
  // salloc and sbatch set SLURM_NTASKS for the whole allocation; only srun's tasks have a rank.
  expectLaunch(readFrom({{"SLURM_NTASKS", "8"}}), 0, 1, 0, "single process");
}

TEST(LaunchEnvironmentTest, EmptyVariablesCountAsUnset) {
  expectLaunch(readFrom({{"RANK", ""}, {"WORLD_SIZE", ""}, {"LOCAL_RANK", ""}}), 0, 1, 0,
               "single process");
}

TEST(LaunchEnvironmentTest, RankWithoutWorldSizeIsIncomplete) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"RANK", "0"}, {"LOCAL_RANK", "0"}});
      },
      {"the torchrun environment is incomplete", "RANK=0", "WORLD_SIZE=(unset)",
       "WORLD_SIZE is missing", "set all three, or none"}));
}

TEST(LaunchEnvironmentTest, WorldSizeAloneIsIncomplete) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"WORLD_SIZE", "2"}});
      },
      {"torchrun environment is incomplete", "RANK is missing"}));
}

TEST(LaunchEnvironmentTest, OpenMpiWithoutLocalRankIsIncomplete) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
      },
      {"the Open MPI environment is incomplete", "OMPI_COMM_WORLD_LOCAL_RANK is missing"}));
}

TEST(LaunchEnvironmentTest, SlurmWithoutLocalIdIsIncomplete) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}});
      },
      {"the Slurm environment is incomplete", "SLURM_LOCALID is missing"}));
}

TEST(LaunchEnvironmentTest, NonIntegerRank) {
  for (const char* value : {"abc", "1.5", "2x", " 1", "99999999999999999999"}) {
    SCOPED_TRACE(value);
    EXPECT_TRUE(test::throwsError(
        [&] {
          readFrom({{"RANK", value}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}});
        },
        {"RANK='" + std::string(value) + "' is not an integer", "torchrun"}));
  }
}

TEST(LaunchEnvironmentTest, NonIntegerSlurmTaskCount) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "four"}, {"SLURM_LOCALID", "0"}});
      },
      {"SLURM_NTASKS='four' is not an integer", "Slurm"}));
}

TEST(LaunchEnvironmentTest, NegativeRank) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"OMPI_COMM_WORLD_RANK", "-1"},
                  {"OMPI_COMM_WORLD_SIZE", "4"},
                  {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
      },
      {"OMPI_COMM_WORLD_RANK='-1' is negative"}));
}

TEST(LaunchEnvironmentTest, RankNotBelowWorldSize) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}});
      },
      {"RANK='4' is not below WORLD_SIZE='4'", "ranks are 0 .. 3"}));
}

TEST(LaunchEnvironmentTest, LocalRankNotBelowWorldSize) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "2"}});
      },
      {"SLURM_LOCALID='2' is not below SLURM_NTASKS='2'"}));
}

TEST(LaunchEnvironmentTest, ZeroWorldSize) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"RANK", "0"}, {"WORLD_SIZE", "0"}, {"LOCAL_RANK", "0"}});
      },
      {"WORLD_SIZE='0' leaves no process to run"}));
}

TEST(LaunchEnvironmentTest, MasterPortOutOfRange) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"MASTER_PORT", "70000"}});
      },
      {"MASTER_PORT='70000' is not a TCP port", "1 to 65535"}));
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"MASTER_PORT", "0"}});
      },
      {"MASTER_PORT='0' is not a TCP port"}));
}

TEST(LaunchEnvironmentTest, MasterPortNotAnInteger) {
  EXPECT_TRUE(test::throwsError(
      [] {
        readFrom({{"MASTER_PORT", "http"}});
      },
      {"MASTER_PORT='http' is not an integer"}));
}

}  // namespace
}  // namespace braze::host
