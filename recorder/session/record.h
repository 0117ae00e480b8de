// SPDX-License-Identifier: GPL-2.0-only
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "recorder/archive/kernel_archive.h"
#include "recorder/core/recording_info.h"
#include "recorder/load/kernel_source.h"
#include "recorder/probe/probe.h"

namespace ezio::recorder {

struct RecordOptions {
  std::filesystem::path output;  // empty: default_output(command[0])
  bool force = false;
  uint64_t ring_buffer_mib = 32;
  std::string layers = "all";  // --layers (recorder/probe/probe.h parse_layers)
  bool probe_cache = true;     // false: --no-probe-cache (recorder/probe/kernel_cache.h)
  std::vector<std::string> command;
  // The command as the user typed it, when `command` is eziotrace's rewriting of it (written as
  // EZIOTRACE::USER_COMMAND); empty: `command` is the user's.
  std::vector<std::string> user_command;
  std::vector<std::string> environment;  // empty: the recorder's own
  // --wait-children: how long descendants that outlive the command are still recorded.
  double wait_children_s = 5;
  // Who holds the BPF programs: eziotraced when its socket is there (kAuto) or always
  // (--service[=SOCKET]), or this process itself (--no-service; root).
  enum class KernelPath { kAuto, kService, kInProcess } kernel_path = KernelPath::kAuto;
  std::string service_socket;  // empty: the default (recorder/service/socket.h)
  // eziotrace's preload helper (converters/eztrace/preload): when the application's environment
  // preloads it, the program can be started at once and held at its gate while the kernel side
  // loads (start_gate.h). Empty: never.
  std::string gate_helper;
  // false: the archive is only an input of a merge that reads what it takes from it (its
  // definitions; its events, unless the recorder's copy replaces them) and removes it afterwards
  // (eziotrace run without --keep-parts). It is then not read back before it is moved into place:
  // the merged archive is.
  bool read_back = true;
};

// What a caller adds to a recording (eziotrace record: EZTrace's alignment data,
// converters/record_command.cpp).
struct RecordExtras {
  // Before the application starts: archive is the directory the archive will be published as,
  // env the application's environment, to add to.
  std::function<void(const std::filesystem::path& archive, std::vector<std::string>& env)> prepare;
  // After the archive is written, before it is published: staged is the directory that becomes
  // the archive.
  std::function<void(const std::filesystem::path& staged)> finish;
  // Given every event of the archive as it is written (eziotrace run: the merge's copy).
  otf2::EventTap* tap = nullptr;
  // The tap's copy is the only one: the archive's event files are not written, its definitions
  // declare the events the tap was given (eziotrace run without --keep-parts, whose merge reads
  // the kernel part's definitions and the tap's events, then removes the part).
  bool tap_only = false;
};

struct RecordResult {
  int exit_status = 0;  // the application's, as a shell reports it
  std::filesystem::path archive;
  RecordingInfo info;
  ArchiveSummary summary;
  // The kernel side's teardown (unhooking the programs loaded in-process: mostly waiting for the
  // kernel), running while the caller goes on with the archive: joined when the result is
  // destroyed, or earlier by the caller. Its recording was over before record() returned.
  std::jthread teardown;
};

class RecordStore;

// The kernel side of a recording, its records going to store: today the programs loaded
// in-process (root), slot 0 of their own KernelPrograms.
// first: the application's process, already started (FirstProcess, kernel_source.h).
std::unique_ptr<KernelSource> open_kernel_source(const LayerSet& layers, uint64_t ring_buffer_bytes,
                                                 const RecordOptions& options, RecordStore& store,
                                                 FirstProcess first = {});

// Runs the command under the kernel recorder and writes the archive.
RecordResult record(const RecordOptions& options, const RecordExtras& extras = {});
void print_summary(const RecordResult& result);
}  // namespace ezio::recorder
