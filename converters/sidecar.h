#pragma once
// The alignment data the preload helper (converters/preload/) writes for every traced process:
// one JSON line per process in <sidecar dir>/<pid>.json.
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
  std::string trace_dir_env;     // EZTRACE_TRACE_DIR, "" when unset
  uint64_t first_timestamp = 0;  // CLOCK_MONOTONIC ns; EZTrace time = monotonic - this
  uint64_t ctor_ns = 0;          // helper constructor: start of EZTrace's own start-up I/O
  bool ctor_before_eztrace = false;
  uint64_t exit_ns = 0;
  std::vector<EztraceThread> threads;

  // Where EZTrace wrote this process's archive: <EZTRACE_TRACE_DIR or cwd>/<program>_trace.
  std::filesystem::path trace_dir() const;
};

// Parses every *.json file of dir; throws ezio::Error on a malformed file.
std::vector<Sidecar> read_sidecars(const std::filesystem::path& dir);
Sidecar parse_sidecar(const std::string& json_line);

}  // namespace ezio::converters
