// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Who a process is in a recording, and whether an I/O call is the application's: the one place
// every analyzer asks (docs/analysis.md, "The application and the infrastructure").
//
// An MPI run records the launcher (mpiexec, hydra_pmi_proxy, orted, srun...) beside the ranks,
// and every process records its start-up: the loader reading libraries, /proc and /sys, /etc.
// The analyzers speak of the ranks' (or the plain program's) data by default and show the rest
// as "infrastructure", apart.
#include <cstdint>
#include <map>
#include <string_view>
#include <unordered_set>

#include "analysis/model/definitions.h"
#include "analysis/model/file_origin.h"

namespace ezio::analysis {

enum class ProcessRole {
  kRank,      // runs the user's program: a process an MPI launcher started, or a plain program
  kLauncher,  // mpiexec, mpirun, hydra_pmi_proxy, orted, prted, srun, slurmstepd...
  kHelper,    // another process of the run: started by a rank (`sh -c`, `rm`) or a script that
              // ran the launcher; its I/O on data files is the application's
};
std::string_view role_key(ProcessRole r);  // "rank", "launcher", "helper"

// A launcher's process name (comm, or the program's file name).
bool is_launcher_name(std::string_view comm);

// The roles of an archive's processes, from their names and EZIOTRACE::PID/PPID.
class ProcessRoles {
 public:
  explicit ProcessRoles(const Definitions& defs);
  ProcessRole of_group(Ref group) const;
  ProcessRole of_location(OTF2_LocationRef loc) const;
  ProcessRole of_pid(uint64_t pid) const;
  bool has_launcher() const { return launcher_; }

 private:
  const Definitions& defs_;
  std::map<Ref, ProcessRole> groups_;
  std::map<uint64_t, ProcessRole> pids_;
  bool launcher_ = false;
};

// Whether I/O is the application's data or the infrastructure around it.
enum class IoScope { kApplication, kInfrastructure };

// The scope of each call as a streaming pass meets it (calls.h sets Call::infrastructure).
// A thread's call is infrastructure when its process is a launcher, or when its file is not the
// application's (file_origin(); a write makes a system file the application's, as files do). A
// block request (read after every thread, docs/trace-model.md) is the scope of the call that
// caused it (`call.id`); without one it is a page fault or write-back of its process (`block.pid`):
// a launcher's is infrastructure, and so is a read of a process that mapped no application file
// (the loader's mapped libraries and executable).
class IoScopeClassifier {
 public:
  explicit IoScopeClassifier(const Definitions& defs);
  void begin_location(OTF2_LocationRef loc);
  // A thread's call: its own file and operation, `is_mmap` when it maps `handle` (its own handle:
  // an mmap inside a call on a file, MPI_File_open's, does not map that file).
  bool thread_call(Ref handle, bool write, bool is_mmap, uint64_t call_id);
  bool block_request(uint64_t pid, uint64_t call_id, bool read) const;
  const ProcessRoles& roles() const { return roles_; }

 private:
  const Definitions& defs_;
  ProcessRoles roles_;
  bool launcher_location_ = false;
  uint64_t pid_ = 0;
  std::map<Ref, FileOrigin> origins_;             // read-only origin per handle
  std::unordered_set<uint64_t> infra_calls_;      // call.id of infrastructure calls (bounded)
  std::unordered_set<uint64_t> mapped_app_pids_;  // processes that mapped an application file
};

}  // namespace ezio::analysis
