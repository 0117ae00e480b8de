// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/interleave.h"

#include <optional>

#include "common/error.h"

// The kernel events read again and written among the user events (docs/merge.md, "The merge",
// step 5), one output location at a time.
namespace ezio::converters::merge_stages {

// Replays the selected kernel locations' events, in the order of their ids, into writer.
void Merger::read_kernel(const std::function<bool(OTF2_LocationRef)>& select, SpanWriter& writer) {
  for (const auto& [loc, extent] : kernel.events->locations()) {
    if (!select(loc)) continue;
    writer.begin_location(loc);
    EventStore::Cursor events(*kernel.events, loc);
    while (const Event* e = events.next()) writer.event(loc, *e);
    writer.end_location(loc);
  }
}

namespace {

// EZTrace's user handles as the merged archive defines them: tied to the kernel file of their
// open (found by the check), else named as EZTrace's path resolved against the process's cwd.
DefinitionMapper user_mapper(const EztraceInput& in, const std::map<Ref, std::string>& tied,
                             SharedDefinitions& shared) {
  auto cwd = in.process.cwd;
  const Definitions& ud = in.archive->defs;
  return DefinitionMapper(ud, shared, [&tied, &ud, cwd](Ref h) {
    if (auto it = tied.find(h); it != tied.end()) return std::optional<std::string>(it->second);
    // Not tied (no kernel open seen): resolve the name as EZTrace's path, like the kernel.
    auto d = ud.io_handles.find(h);
    if (d == ud.io_handles.end() || ud.io_files.count(d->second.file))
      return std::optional<std::string>();
    std::filesystem::path name = ud.str(d->second.name);
    if (name.empty()) return std::optional<std::string>();
    if (name.is_relative()) name = cwd / name;
    return std::optional<std::string>(name.lexically_normal().string());
  });
}

}  // namespace

void SpanWriter::changed() const {
  fail("{}: the kernel archive changed while it was merged (location {})",
       m_.kernel.anchor.string(), loc_);
}

// The events, one output location after the other: each EZTrace thread's with its kernel
// location's, then (write_kernel_only) the rest of the kernel archive.
void Merger::write_threads(Output& out, SpanWriter& writer, const std::vector<Process>& processes) {
  std::map<OTF2_LocationRef, size_t> writes_left;
  for (const Process& process : processes) {
    for (const Thread& t : process.threads) ++writes_left[t.out_loc];
  }
  for (size_t pi = 0; pi < inputs.size(); ++pi) {
    const EztraceInput& in = inputs[pi];
    const Sidecar& p = in.process;
    if (dropped_pids.count(p.pid)) continue;
    DefinitionMapper umap = user_mapper(in, processes[pi].tied, out.shared);
    write_process_properties(out, p);
    for (const Thread& t : processes[pi].threads) {
      std::optional<EventStore::Cursor> user;
      if (t.user_events) user.emplace(*in.archive->events, t.user_loc);
      writer.set_user(user ? &*user : nullptr, p.time_offset(), &umap, t.out_loc);
      if (t.kernel_events) read_kernel([&t](OTF2_LocationRef l) { return l == t.out_loc; }, writer);
      writer.finish_user();
      // Written out now, unless another EZTrace thread shares it: memory stays per location.
      if (--writes_left[t.out_loc] == 0) out.finish(t.out_loc);
    }
  }
}

// Everything else of the kernel archive, as it is (minus EZTrace's own I/O).
void Merger::write_kernel_only(Output& out, SpanWriter& writer) {
  writer.set_user(nullptr, 0);
  writer.on_location_done([&out](OTF2_LocationRef l) { out.finish(l); });
  read_kernel(
      [&](OTF2_LocationRef l) { return !merged_kernel.count(l) && !dropped_locations.count(l); },
      writer);
  report.unsupported_events += kernel.unsupported_events;
}

}  // namespace ezio::converters::merge_stages
