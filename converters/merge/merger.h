// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The merge's state, shared by its stages (internal to converters/merge/):
//   inputs.cpp         which EZTrace archive and locations belong to which process image
//   own_io_filter.cpp  EZTrace's own I/O dropped from the kernel side, untraced processes found
//   check.cpp          each user thread against its kernel spans: the alignment self-check and
//                      the user handle -> kernel file tie
//   interleave.cpp     the kernel events read again and written among the user events
//   locations.cpp      the merged archive's locations and the definitions they need
//   properties.cpp     what the merge found, the kernel's properties and the clock
//   merge.cpp          the stages in order
// docs/merge.md describes the rules.
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "converters/merge/comm_mapper.h"
#include "converters/merge/definition_mapper.h"
#include "converters/merge/kernel_spans.h"
#include "converters/merge/merge.h"

namespace ezio::converters::merge_stages {

inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

struct KernelProcess {
  uint32_t pid = 0, ppid = 0;
  Ref group = 0;
  std::map<uint32_t, OTF2_LocationRef> threads;  // tid -> location
};

// EZTrace's work in one process image, as times on CLOCK_MONOTONIC (docs/merge.md, "EZTrace's
// own I/O"). An image without an archive (it exec'd, ended with _exit, or EZTrace wrote nothing)
// still has its start-up window: the helper wrote its record when main started.
struct ImageWindows {
  uint64_t init_begin = 0, init_end = 0;  // helper constructor .. the program's main
  uint64_t fin_begin = kNever;            // EZTrace's finalization starts
  std::filesystem::path trace_dir;        // ends with its last write there
  uint64_t helper_begin = 0;              // the helper's exit record: exit_ns ..
};

// One EZTrace thread of the merged archive.
struct Thread {
  OTF2_LocationRef out_loc;
  OTF2_LocationRef user_loc;  // EZTrace's location
  bool user_events;           // it has an event file
  bool kernel_events;         // the kernel location out_loc has events to merge
};
struct Process {
  // The user handle -> kernel file tie, found by the check, used when writing.
  std::map<Ref, std::string> tied;
  std::vector<Thread> threads;
};

// The merged archive being written: the writer, the definitions both inputs share, the location
// ids in use and the time range.
struct Output {
  Output(const std::filesystem::path& dir, const Definitions& kernel_defs);
  // The merged location group of a kernel location group, defined on first use.
  otf2::Ref group_of(Ref kgroup);
  // Writes e on loc, renumbered by map, at time t, raised to keep loc ordered (counted in
  // clamped). Consecutive events mostly go to one
  // location: its writer and last time are kept at hand.
  void write(DefinitionMapper& map, OTF2_LocationRef loc, const Event& e, uint64_t t);
  // Writes out a location's events (ArchiveWriter::finish_events).
  void finish(OTF2_LocationRef loc);

  const Definitions& kd;
  otf2::ArchiveWriter w;
  Ref knode = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
  otf2::Ref machine;
  CommMapper comms;
  SharedDefinitions shared;
  DefinitionMapper kmap;
  std::map<Ref, otf2::Ref> groups;
  std::set<OTF2_LocationRef> used_ids;
  // Ids of locations the merge adds: above every id of the kernel archive, dropped ones too.
  uint64_t spare_id = uint64_t(4) << 32;
  uint64_t t_min, t_max;
  std::map<OTF2_LocationRef, uint64_t> last;  // per output location, to keep time ordered
  uint64_t clamped = 0;

 private:
  bool at_hand_ = false;
  OTF2_LocationRef loc_ = 0;  // the location write() wrote last, when at_hand_
  OTF2_EvtWriter* writer_ = nullptr;
  uint64_t* last_ = nullptr;
};

class SpanWriter;

struct Merger {
  Merger(const EztraceInputs& in, const std::vector<Sidecar>& im, KernelIndex k)
      : inputs(in.traces), unreadable(in.unreadable), images(im), kernel(std::move(k)) {}
  void run(const std::filesystem::path& out_dir);

  // The spans of a kernel location, nullptr when it has no events.
  KernelLocation* kernel_location(OTF2_LocationRef loc);

  // own_io_filter.cpp
  void index_kernel();
  void filter_own_io();
  void find_untraced();
  void drop_image_windows(const KernelProcess& kp, const ImageWindows& w);
  bool lives_inside(const KernelProcess& p, uint64_t begin, uint64_t end);
  void drop_startup_children(const std::vector<std::pair<uint32_t, ImageWindows>>& windows);
  void filter_caused_requests();

  // check.cpp
  void violation(std::string text);
  void count_lost_syscalls();
  void check_thread(const EztraceInput& in, OTF2_LocationRef eloc, bool user_events,
                    const SpanList* kspans, uint32_t tid, std::map<Ref, std::string>& tied);

  // interleave.cpp
  void write_threads(Output& out, SpanWriter& writer, const std::vector<Process>& processes);
  void write_kernel_only(Output& out, SpanWriter& writer);
  void read_kernel(const std::function<bool(OTF2_LocationRef)>& select, SpanWriter& writer);

  // locations.cpp
  void define_kernel_locations(Output& out);
  std::vector<Process> map_threads(Output& out);
  std::optional<Thread> map_thread(Output& out, const EztraceInput& in, OTF2_LocationRef eloc,
                                   const KernelProcess* kp, std::map<Ref, std::string>& tied);
  OTF2_LocationRef define_thread(Output& out, const Sidecar& p, const KernelProcess* kp,
                                 uint32_t tid);
  void define_comm_ranks(Output& out);

  // properties.cpp
  void write_process_properties(Output& out, const Sidecar& p);
  void write_properties(Output& out);
  void write_user_level(Output& out);
  std::string aborted_status(Ref knode) const;
  std::string unreadable_summary() const;
  std::string alignment_word() const;

  const std::vector<EztraceInput>& inputs;
  const std::vector<UnreadableTrace>& unreadable;  // processes merged without their user level
  const std::vector<Sidecar>& images;              // every image's record, with an archive or not
  KernelIndex kernel;  // span summaries; the events are read again to be written
  MergeReport report;

  std::map<uint32_t, KernelProcess> kprocs;
  std::map<Ref, std::vector<OTF2_LocationRef>> group_locations;  // all of a process's locations
  std::set<OTF2_LocationRef> dropped_locations;
  std::set<uint32_t> dropped_pids;        // EZTrace's own processes
  std::set<std::string> traced_syscalls;  // kernel regions defined: what the recorder watched

  // Threads that EZTrace traced: user events and kernel spans on one location.
  std::set<OTF2_LocationRef> merged_kernel;
  // (input archive, EZTrace location) -> merged location, for the ranks of communicators.
  std::map<std::pair<const Definitions*, uint64_t>, OTF2_LocationRef> user_locations;
};

// The events of the process's own locations of its archive (nullptr: no event file).
inline const UserLocation* events_of(const EztraceInput& in, OTF2_LocationRef loc) {
  auto it = in.archive->locations.find(loc);
  return it == in.archive->locations.end() ? nullptr : &it->second;
}

// EZTrace records these before calling the real function: at equal timestamps they go before the
// kernel's events, all others after, so that the user call keeps enclosing its system call.
bool opens_a_call(EventKind k);

// The merged order of a thread: kernel span s goes before user event u (time on
// CLOCK_MONOTONIC: ut) when it starts earlier, or at the same time unless u opens a call.
inline bool kernel_first(const Span& s, const Event& u, uint64_t ut) {
  return s.t0 < ut || (s.t0 == ut && !opens_a_call(u.kind));
}

}  // namespace ezio::converters::merge_stages
