/// What a job launcher (torchrun, Open MPI's mpirun, Slurm's srun, a Kubernetes Indexed Job) tells
/// each process it starts about the
/// cluster, read from the launcher's environment variables. These are the lowest-precedence cluster
/// settings: AM_* variables, --am-* flags and values in code override each of them
/// (devices/options.hpp, doc/runtime.md "Cluster options").
#pragma once

#include "actormesh/devices/options.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace am {

/// One cluster setting as a launcher gives it: still text, so that it goes through the same parsing
/// and checks as an AM_* variable, and a bad value is reported under the launcher's own variable.
struct launcher_setting {
  std::string field;  ///< the am::options field it sets: process_id, num_processes, coordinator_address
  std::string text;   ///< the value, e.g. "3" or "node001:63440"
  std::string source; ///< the variables it was read from, e.g. "SLURM_PROCID"
};

/// The partial cluster settings of a detected launcher.
struct launcher_cluster {
  std::string launcher;                   ///< "torchrun", "Open MPI", "Slurm", "a Kubernetes Indexed Job"
  std::vector<launcher_setting> settings; ///< process_id always, num_processes unless
                                          ///< num_processes_problem says why not; the coordinator
                                          ///< when the variables name its host and port
  /// Why the variables gave no coordinator, for the error that asks for one (empty when they gave
  /// one). A malformed node list or URI is no error by itself: AM_COORDINATOR may replace it.
  std::string coordinator_problem;
  /// Why the variables give no process count (a Kubernetes Job's pods are not told it), for the
  /// error when nothing else gives one: without it, every pod would run alone.
  std::string num_processes_problem;
};

/// The launcher whose variables are set, or nothing, checked in this order: torchrun (RANK,
/// WORLD_SIZE, MASTER_ADDR and MASTER_PORT, all four: torchrun started by srun or mpirun sees their
/// variables too, with one task a node); Open MPI (OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE),
/// before Slurm because mpirun inside a Slurm allocation leaves the allocation's SLURM_* variables
/// in place; Slurm (SLURM_PROCID, SLURM_NTASKS and SLURM_STEP_NODELIST or else SLURM_JOB_NODELIST);
/// a Kubernetes Indexed Job (JOB_COMPLETION_INDEX: the process id only). The coordinator's host is
/// MASTER_ADDR, the first host of the Slurm node list, or mpirun's host: the first IPv4 address
/// (else IPv6) of OMPI_MCA_orte_hnp_uri (Open MPI 4) or, when PRTE_LAUNCHED=1, of the PMIx server
/// URI (Open MPI 5). Its port is AM_COORDINATOR_PORT when set, else MASTER_PORT + 1 (MASTER_PORT is
/// torch's own store's) or derived from the job id (derived_coordinator_port).
/// Throws am::value_error when AM_COORDINATOR_PORT is not a port.
std::optional<launcher_cluster> detect_launcher_cluster(const environment_lookup& env);

/// The hosts of a Slurm host list, in Slurm's order: "node1", "a,b", "node[001-004,007],gpu[1-2]",
/// "rack[1-2]-n[1-2]" (rack1-n1, rack1-n2, rack2-n1, rack2-n2). A range keeps the zero padding of
/// its lower bound ("n[08-10]": n08, n09, n10). Throws am::value_error naming `source` on a
/// malformed list or one of more than 1,000,000 hosts.
std::vector<std::string> expand_slurm_host_list(const std::string& list, const std::string& source);

/// JAX's coordinator port for a job id, the same on every process of the job:
/// job_id % 4096 + 61440, one of the top 4096 ports (61440..65535). Slurm's job id is SLURM_JOB_ID;
/// Open MPI 4's is the number before the '.' of OMPI_MCA_orte_hnp_uri divided by 4096 (it is always
/// a multiple of 4096); Open MPI 5's is the number between '-' and '@' of PMIX_NAMESPACE.
int derived_coordinator_port(std::uint64_t job_id) noexcept;

/// A TCP port, 1..65535, in decimal digits; nothing when `text` is not one.
std::optional<int> parse_port(std::string_view text) noexcept;

} // namespace am
