// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The alignment data the preload helper (converters/eztrace/preload/) writes for every process
// image that loads EZTrace: one JSON line per image in <sidecar dir>/<pid>.<ctor_ns>.json
// (<pid>.json from older helpers), written when the program's main starts and again, complete, at
// its exit.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ezio::converters {

struct EztraceThread {
  uint32_t tid = 0;
  int rank = 0;
  uint64_t location = 0;  // EZTrace's OTF2 location id of the thread
  std::string name;
};

struct Sidecar {
  uint32_t pid = 0, ppid = 0;
  std::string program;  // argv[0] without directories: EZTrace names its archive <program>_trace
  std::filesystem::path cwd;
  std::string trace_dir_env;          // EZTRACE_TRACE_DIR, "" when unset
  std::filesystem::path sidecar_dir;  // where the helper wrote this file (its I/O is filtered)
  uint64_t first_timestamp = 0;       // in EZTrace's clock; EZTrace time = that clock - this
  uint64_t ctor_ns = 0;               // helper constructor: start of EZTrace's own start-up I/O
  bool ctor_before_eztrace = false;
  uint64_t main_ns = 0;      // the program's start routine: EZTrace's start-up is over (0: unknown)
  uint64_t finalize_ns = 0;  // EZTrace's finalization started (0: unknown, or it never did)
  uint64_t exit_ns = 0;
  // The image ran its exit handlers (a record written at exit). Otherwise it exec'd another
  // program or ended without them (_exit, a signal): EZTrace wrote no trace for it, and only its
  // start-up window is known.
  bool exited = true;
  // EZTrace's clock: CLOCK_MONOTONIC, or MPI_Wtime()*1e9 in MPI mode, whose offset to
  // CLOCK_MONOTONIC (clock - monotonic) the helper measured to within clock_offset_error_ns.
  std::string clock = "CLOCK_MONOTONIC";
  int64_t clock_offset_ns = 0;
  uint64_t clock_offset_error_ns = 0;
  std::vector<EztraceThread> threads;

  // Where EZTrace wrote this process's archive: <EZTRACE_TRACE_DIR or cwd>/<program>_trace.
  std::filesystem::path trace_dir() const;
  // CLOCK_MONOTONIC = EZTrace time + this.
  uint64_t time_offset() const { return first_timestamp - static_cast<uint64_t>(clock_offset_ns); }
};

// Parses every *.json file of dir; throws ezio::Error on a malformed file.
std::vector<Sidecar> read_sidecars(const std::filesystem::path& dir);
Sidecar parse_sidecar(const std::string& json_line);

}  // namespace ezio::converters
