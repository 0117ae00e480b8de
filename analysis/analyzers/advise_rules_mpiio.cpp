// SPDX-License-Identifier: GPL-2.0-only
// The rules about MPI-IO (the `mpiio` module's calls, docs/mpiio.md): independent small accesses
// that collective I/O would merge, collective calls whose aggregation still reached the file
// system and the device small or unaligned, shared-file-pointer calls serialising the ranks.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/analyzers/advise_rules.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

void rule_mpiio_small_independent(RuleContext& c) {
  for (auto& [path, f] : c.ev.hpc.mpiio) {
    size_t ranks = f.independent_processes.size();
    if (f.independent_small < c.t["mpiio_small_min_count"] || ranks < c.t["mpiio_min_ranks"] ||
        share(f.independent_small, f.independent) <= c.t["mpiio_small_share"])
      continue;
    Finding& x =
        c.add(Level::kWarn, "Small independent MPI-IO accesses that collective I/O would merge");
    x.evidence = fmt::format(
        "{} of {} independent MPI-IO reads/writes ({}) are smaller than {}, from {} processes on "
        "the same file; {} collective calls",
        f.independent_small, f.independent, pct(share(f.independent_small, f.independent)),
        human_bytes(static_cast<uint64_t>(c.t["mpiio_small_bytes"])), ranks, f.collective);
    x.numbers = {{"independent", f.independent},
                 {"independent_small", f.independent_small},
                 {"processes", ranks},
                 {"collective", f.collective}};
    x.where = {path};
    x.advice =
        "Use the collective forms (MPI_File_write_at_all, MPI_File_write_all...) so that MPI-IO "
        "merges the ranks' pieces into large contiguous requests (two-phase I/O); describe each "
        "rank's part with a file view instead of many small calls.";
    x.section = "files";
  }
}

void rule_collective_small_requests(RuleContext& c) {
  for (auto& [path, f] : c.ev.hpc.mpiio) {
    uint64_t bad = std::max(f.aggregated_small, f.aggregated_unaligned);
    if (f.collective == 0 || f.aggregated < c.t["collective_min_requests"] ||
        share(bad, f.aggregated) <= c.t["collective_bad_share"])
      continue;
    bool device = f.device > 0 && share(f.device_small, f.device) > c.t["collective_bad_share"];
    Finding& x = c.add(device ? Level::kHigh : Level::kWarn,
                       "Collective MPI-IO still reached the file system in small or unaligned "
                       "requests");
    x.evidence = fmt::format(
        "{} collective calls ({}) made {} system-call reads/writes: {} smaller than {}, {} not "
        "aligned to {}",
        f.collective, human_bytes(f.collective_bytes), f.aggregated, f.aggregated_small,
        human_bytes(static_cast<uint64_t>(c.t["collective_small_bytes"])), f.aggregated_unaligned,
        human_bytes(static_cast<uint64_t>(c.t["collective_align_bytes"])));
    if (f.device > 0)
      x.evidence += fmt::format("; the device received {} requests for them, {} small", f.device,
                                f.device_small);
    x.numbers = {{"collective", f.collective},
                 {"collective_bytes", f.collective_bytes},
                 {"aggregated", f.aggregated},
                 {"aggregated_small", f.aggregated_small},
                 {"aggregated_unaligned", f.aggregated_unaligned},
                 {"device_requests", f.device},
                 {"device_small", f.device_small}};
    x.where = {path};
    x.advice =
        "The aggregation did not make large requests: raise the collective buffer (MPI_Info "
        "cb_buffer_size), enable collective buffering for writes (romio_cb_write=enable), align "
        "the file domains to the file system's block or stripe (striping_unit, "
        "romio_ds_write=disable for non-contiguous views), and write larger pieces per rank.";
    x.section = "files";
  }
}

void rule_shared_file_pointer(RuleContext& c) {
  for (auto& [path, f] : c.ev.hpc.mpiio) {
    size_t ranks = f.shared_processes.size();
    if (f.shared < c.t["shared_pointer_min_calls"] || ranks < 2 ||
        share(f.shared_ticks, c.ev.hpc.mpiio_ticks) <= c.t["shared_pointer_time_share"])
      continue;
    Finding& x = c.add(Level::kWarn, "Shared-file-pointer operations serialise the ranks");
    x.evidence = fmt::format(
        "{} shared-pointer calls (_shared, _ordered) from {} processes took {} ({} of the MPI-IO "
        "read/write time)",
        f.shared, ranks, human_seconds(c.ev.seconds(f.shared_ticks)),
        pct(share(f.shared_ticks, c.ev.hpc.mpiio_ticks)));
    x.numbers = {{"calls", f.shared},
                 {"processes", ranks},
                 {"time_s", c.ev.seconds(f.shared_ticks)},
                 {"mpiio_time_s", c.ev.seconds(c.ev.hpc.mpiio_ticks)}};
    x.where = {path};
    x.advice =
        "Each shared-pointer access takes a lock on the pointer (ROMIO: a hidden file): the ranks "
        "wait for each other. Compute each rank's offset (MPI_Exscan of the sizes) and use "
        "explicit-offset collective calls (MPI_File_write_at_all).";
    x.section = "files";
  }
}

}  // namespace ezio::analysis
