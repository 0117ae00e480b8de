// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The kernel-layer tests' view of a recording: `eziotrace record` of a workload on a private loop
// device, and its archive as the independent python3-otf2 reader sees it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loop_fs.h"
#include "run.h"

namespace ezio::test {

struct Recording {
  nlohmann::json trace;  // read_trace(): the archive as python3-otf2 reads it
  long tid = 0;
  long stat_ios = -1;
  std::string out;  // what the workload printed
};

// The value the workload printed as "key=<n>"; throws when it did not.
long value_of(const std::string& out, const std::string& key);

// Where the tests record: beside the loop device's mount point, not on it.
std::filesystem::path trace_dir(const LoopFs& fs);

// What the tests check in the archive in trace_dir(fs), from tests/support/otf2_dump.py: "block"
// requests with their attribution, "unattributed" requests and "unattributed_bytes" per device,
// "pagecache" counters per thread (with "reclaimed", its process's), "calls" (call.id -> thread
// and region), the machine's "properties", the regular "files" and the "writes" each got.
nlohmann::json read_trace(const LoopFs& fs);

// `eziotrace record options... -- command...` into trace_dir(fs); fails unless it exits 0.
Run record_command(const LoopFs& fs, const std::vector<std::string>& options,
                   const std::vector<std::string>& command);

// Records `io_workload args...` with all layers and reads the archive back.
Recording record(const LoopFs& fs, const std::vector<std::string>& args);

// The row of `layer` in `eziotrace layers --json` of the archive in trace_dir(fs).
nlohmann::json layers_row(const LoopFs& fs, const std::string& layer);

// Runs `io_workload args...` unrecorded.
void workload(const std::vector<std::string>& args);

// The block requests of operation op ("read", "write", "flush"...).
std::vector<nlohmann::json> requests(const nlohmann::json& trace, const std::string& op);

// The page-cache counters of the recording's workload thread.
nlohmann::json pagecache_of(const Recording& r);

}  // namespace ezio::test
