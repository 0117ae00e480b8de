// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Merges EZTrace's user-level archives with eziotrace's kernel archive into one OTF2 archive
// whose user and kernel events share CLOCK_MONOTONIC and the kernel's thread locations.
// docs/merge.md describes the rules.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "converters/merge/event_store.h"
#include "converters/merge/inputs.h"

namespace ezio::converters {

struct MergeReport {
  uint64_t processes = 0;         // EZTrace archives merged
  uint64_t user_events = 0;       // EZTrace events written (all of them)
  uint64_t kernel_events = 0;     // kernel events written
  uint64_t own_io_calls = 0;      // kernel calls dropped as EZTrace's (or the helper's) own I/O
  uint64_t own_io_processes = 0;  // kernel processes dropped (EZTrace's `rm -rf` child)
  // Processes with calls in the archive but no EZTrace trace, and why (one line each).
  std::vector<uint32_t> untraced_pids;
  std::vector<std::string> untraced;
  uint64_t unreadable_traces = 0;  // processes whose EZTrace archive could not be read
  std::string user_level;          // EZIOTRACE::USER_LEVEL: complete, partial: ..., missing: ...
  // EZIOTRACE::STATUS when the merge rewrote the kernel's ("application-aborted: ..."), else "".
  std::string status;
  uint64_t own_io_block_requests = 0;  // block requests caused by a dropped call (call.id)
  uint64_t comms = 0, groups = 0;      // EZTrace's communicators and groups, as written
  uint64_t checked_calls = 0;          // user calls that must contain their system call
  // User close() calls on an fd EZTrace never saw opened: its wrapper makes no system call.
  uint64_t closes_without_syscall = 0;
  uint64_t violations = 0;
  // User calls without their system call while the kernel lost syscall events: the call may have
  // been among the lost, so neither a violation nor verified (EZIOTRACE::ALIGNMENT_UNVERIFIABLE).
  uint64_t unverifiable_calls = 0;
  uint64_t syscalls_lost = 0;   // the kernel archive's EZIOTRACE::LOST::syscall
  uint64_t clamped_events = 0;  // events whose time had to be raised to keep a location ordered
  uint64_t unsupported_events = 0;
  uint64_t store_bytes = 0;  // the event stores' temporary files (event_store.h), all inputs
  // The kernel events came from the recorder's copy (kernel_spans.h), not from decoding its
  // archive.
  bool kernel_events_recorded = false;
  std::vector<std::string> violation_details;  // the first ones, for the user to read
  std::vector<std::string> warnings;
};

// Writes <out_dir>/eziotrace.otf2. own_dirs: directories whose files are EZTrace's own or the
// helper's (trace dirs are added from the sidecars); kernel calls touching them are dropped.
// images: the record of every process image that loaded EZTrace, with an archive or not (those of
// `eztrace` need not be repeated): EZTrace's own work is dropped for all of them. With no EZTrace
// input at all the archive is the kernel's, rewritten, and says so (EZIOTRACE::USER_LEVEL); the
// processes of eztrace.unreadable are merged without user level, and the archive says why.
// Both inputs are streamed (docs/merge.md, "Streaming"); merger.h lists the stages.
MergeReport merge_archives(const EztraceInputs& eztrace, const std::filesystem::path& kernel_anchor,
                           const std::filesystem::path& out_dir,
                           const std::vector<std::filesystem::path>& own_dirs,
                           const std::vector<Sidecar>& images = {});

// The same, reading the EZTrace archives (load_eztrace) while the kernel archive is read on a
// thread of its own: each input's one pass overlaps the other's. Every archive load_eztrace
// returns must be of an image of images (whose trace directories are EZTrace's own).
// kernel_events: the kernel archive's events as the recorder wrote them (an EventStore it tapped,
// see kernel_spans.h), or nullptr to read them from the archive.
MergeReport merge_archives(const std::function<EztraceInputs()>& load_eztrace,
                           const std::filesystem::path& kernel_anchor,
                           const std::filesystem::path& out_dir,
                           const std::vector<std::filesystem::path>& own_dirs,
                           const std::vector<Sidecar>& images,
                           std::unique_ptr<EventStore> kernel_events = nullptr);

// True for an event that came from EZTrace in a merged archive: user regions (no kernel layer
// prefix), thread begin/end, and I/O events on handles of a paradigm other than "linux".
bool is_user_event(const Definitions& defs, const Event& e);
// The kernel layer of a region's canonical name ("syscall", "vfs", ...), "" for user regions.
std::string_view region_layer(std::string_view canonical);

}  // namespace ezio::converters
