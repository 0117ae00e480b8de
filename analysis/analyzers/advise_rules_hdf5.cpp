// SPDX-License-Identifier: GPL-2.0-only
// The rules about HDF5 (the `hdf5` module's calls: regions named after the function, hdf5.object,
// hdf5.chunk_bytes): datasets written in many small H5Dwrite, chunks smaller than the file
// system's block, metadata I/O taking a large share of the time.
#include <fmt/format.h>

#include "analysis/analyzers/advise_rules.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

void rule_hdf5_small_writes(RuleContext& c) {
  for (auto& [key, d] : c.ev.hpc.datasets) {
    if (d.small_writes < c.t["hdf5_small_min_writes"] ||
        share(d.small_writes, d.writes) <= c.t["hdf5_small_share"])
      continue;
    Finding& x = c.add(Level::kWarn, "HDF5 dataset written in many small H5Dwrite calls");
    x.evidence = fmt::format(
        "{} of {} H5Dwrite calls ({}) wrote less than {} ({} in all){}", d.small_writes, d.writes,
        pct(share(d.small_writes, d.writes)),
        human_bytes(static_cast<uint64_t>(c.t["hdf5_small_write_bytes"])), human_bytes(d.bytes),
        d.chunk_bytes ? fmt::format(", chunks of {}", human_bytes(d.chunk_bytes))
                      : std::string(", not chunked"));
    x.numbers = {{"writes", d.writes},
                 {"small_writes", d.small_writes},
                 {"bytes", d.bytes},
                 {"chunk_bytes", d.chunk_bytes}};
    x.where = {key};
    x.advice = d.chunk_bytes
                   ? "Write larger selections per H5Dwrite (buffer rows in memory), and give the "
                     "chunk cache room for the chunks being filled (H5Pset_chunk_cache) so that "
                     "each chunk is written once."
                   : "Write larger selections per H5Dwrite (buffer in memory), or make the "
                     "dataset chunked (H5Pset_chunk) with a chunk cache large enough to gather "
                     "the small writes.";
    x.section = "files";
  }
}

void rule_hdf5_small_chunks(RuleContext& c) {
  for (auto& [key, d] : c.ev.hpc.datasets) {
    if (d.chunk_bytes == 0 || d.chunk_bytes >= c.t["hdf5_min_chunk_bytes"]) continue;
    Finding& x = c.add(Level::kWarn, "HDF5 chunks smaller than the file system's block");
    x.evidence = fmt::format("chunks of {} (below {}): every chunk is its own partial-block I/O",
                             human_bytes(d.chunk_bytes),
                             human_bytes(static_cast<uint64_t>(c.t["hdf5_min_chunk_bytes"])));
    x.numbers = {{"chunk_bytes", d.chunk_bytes}, {"writes", d.writes}};
    x.where = {key};
    x.advice =
        "Make chunks at least the file system's block (on Lustre/GPFS the stripe size; set "
        "hdf5_min_chunk_bytes to it), typically 64 KiB–1 MiB, shaped like the accesses.";
    x.section = "files";
  }
}

void rule_hdf5_metadata(RuleContext& c) {
  for (auto& [path, f] : c.ev.hpc.hdf5) {
    uint64_t ops = f.flushes + f.metadata_writes;
    uint64_t ticks = f.flush_ticks + f.metadata_ticks;
    if (ops < c.t["hdf5_metadata_min_ops"] ||
        share(ticks, f.ticks) <= c.t["hdf5_metadata_time_share"])
      continue;
    Finding& x = c.add(Level::kWarn, "HDF5 metadata I/O takes a large share of the time");
    x.evidence = fmt::format(
        "{} H5Fflush ({}) and {} small writes near the file's start ({}) take {} of the {} "
        "spent in HDF5 calls",
        f.flushes, human_seconds(c.ev.seconds(f.flush_ticks)), f.metadata_writes,
        human_seconds(c.ev.seconds(f.metadata_ticks)), pct(share(ticks, f.ticks)),
        human_seconds(c.ev.seconds(f.ticks)));
    x.numbers = {{"flushes", f.flushes},
                 {"flush_s", c.ev.seconds(f.flush_ticks)},
                 {"metadata_writes", f.metadata_writes},
                 {"metadata_s", c.ev.seconds(f.metadata_ticks)},
                 {"hdf5_s", c.ev.seconds(f.ticks)}};
    x.where = {path};
    x.advice =
        "Flush less often; let the metadata cache grow and write it at close (H5Pset_mdc_config), "
        "aggregate metadata into larger blocks (H5Pset_meta_block_size), use the latest file "
        "format (H5Pset_libver_bounds), and in parallel use collective metadata writes "
        "(H5Pset_coll_metadata_write).";
    x.section = "files";
  }
}

}  // namespace ezio::analysis
