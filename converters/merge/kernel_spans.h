// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A kernel thread's events cut into top-level spans (a syscall's ENTER ... LEAVE with everything
// nested in it), the unit the merge moves around, filters and checks. The merge decides on a
// summary of each span (a few words, not its events) made in the one pass over the kernel archive
// (kept on disk: span_store.h), which also copies the events into an event store (event_store.h),
// replayed location by location to write them (SpanCutter).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "converters/merge/archive_model.h"
#include "converters/merge/event_store.h"
#include "converters/merge/span_store.h"

namespace ezio::converters {

// A block request event opening a span: (handle, matching id), and whether it is the begin.
struct SpanRequest {
  Ref handle;
  uint64_t id;
  bool begin;
};

struct KernelLocation {
  SpanList spans;
  std::map<size_t, SpanRequest> requests;  // span index -> its request, for request spans
  // span index -> the files under the own directories it touches (normalized), for own spans
  std::map<size_t, std::vector<const std::string*>> own_files;
};

// The kernel archive as the merge decides on it.
struct KernelIndex {
  std::filesystem::path anchor;
  Definitions defs;
  std::map<OTF2_LocationRef, KernelLocation> locations;  // those with an event file
  std::unique_ptr<SpanStore> store;                      // their spans
  std::unique_ptr<EventStore> events;                    // their events, to be written
  uint64_t unsupported_events = 0;
  bool recorded = false;  // events: the recorder's copy, the archive's events were not decoded
  std::map<Ref, std::string> normal_paths;  // a handle's file path, normalized ("" for none)
};

// Reads the kernel archive once, into its span summaries and a copy of its events (temporary
// files in temp_dir); own_dirs are normalized paths. With `recorded`, the copy the recorder made
// while it wrote the archive (otf2::EventTap), only the definitions are read and the events are
// taken from there, unless its event counts differ from the archive's.
KernelIndex index_kernel_spans(const std::filesystem::path& anchor,
                               const std::vector<std::string>& own_dirs,
                               const std::filesystem::path& temp_dir,
                               std::unique_ptr<EventStore> recorded = nullptr);

// True when path lies strictly under one of dirs.
bool path_under(const std::string& path, const std::vector<std::string>& dirs);

// Cuts a location's events, given one at a time, into spans: complete() is true after the event
// that closes the current top-level span (the caller then takes it and calls reset()).
class SpanCutter {
 public:
  void add(const Event& e) {
    if (e.kind == EventKind::Enter) ++depth_;
    if (e.kind == EventKind::Leave && depth_ > 0) --depth_;
  }
  bool complete() const { return depth_ == 0; }

 private:
  int depth_ = 0;
};

}  // namespace ezio::converters
