// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/error.h"

// Which EZTrace archive, and which of its locations, belong to which process image (docs/merge.md,
// "The merge", step 1).
namespace ezio::converters {
namespace {

// What the filter of EZTrace's own work needs of each location before any event is written,
// while the events are copied into the archive's event store. A failure to store is noted: it is
// not the archive's fault.
class Summarizer : public otf2::EventVisitor {
 public:
  explicit Summarizer(EztraceArchive& archive) : archive_(archive) {
    for (const auto& [ref, r] : archive.defs.regions) {
      if (archive.defs.str(r.name) == "EZTrace finalize") finalize_.insert(ref);
    }
  }
  void begin_location(OTF2_LocationRef loc) override {
    loc_ = &archive_.locations[loc];
    storing([&] { archive_.events->begin_location(loc); });
  }
  void end_location(OTF2_LocationRef) override {
    storing([&] { archive_.events->end_location(); });
  }
  void event(OTF2_LocationRef, const Event& e) override {
    storing([&] { archive_.events->append(e); });
    if (loc_->events++ == 0) loc_->first_time = e.time;
    if (!loc_->finalizes && e.kind == EventKind::Enter && finalize_.count(e.ref)) {
      loc_->finalizes = true;
      loc_->finalize_time = e.time;
    }
  }
  bool store_failed() const { return store_failed_; }

 private:
  template <typename F>
  void storing(F&& f) {
    try {
      f();
    } catch (...) {
      store_failed_ = true;
      throw;
    }
  }

  EztraceArchive& archive_;
  std::set<Ref> finalize_;
  UserLocation* loc_ = nullptr;
  bool store_failed_ = false;
};

// The warning for the processes of an archive that cannot be read.
std::string unreadable_warning(const std::vector<const Sidecar*>& procs,
                               const std::string& reason) {
  std::string names;
  for (const Sidecar* s : procs) {
    names += fmt::format("{}{} [{}]", names.empty() ? "" : ", ", s->program, s->pid);
  }
  return fmt::format(
      "{}: EZTrace's trace cannot be read, merged without its user-level calls "
      "(EZIOTRACE::PIDS_WITHOUT_USER_TRACE): {}",
      names, reason);
}

}  // namespace

std::optional<EztraceArchive> index_eztrace_archive(const std::filesystem::path& anchor,
                                                    const std::filesystem::path& temp_dir,
                                                    std::string& unreadable) {
  std::optional<otf2::ArchiveReader> reader;
  try {
    reader.emplace(anchor);
  } catch (const Error& e) {
    unreadable = e.what();
    return std::nullopt;
  }
  EztraceArchive archive;
  archive.anchor = reader->anchor();
  archive.defs = reader->defs();
  archive.events = std::make_shared<EventStore>(temp_dir);
  Summarizer summary(archive);
  otf2::ReadOptions options;
  options.lenient = true;  // EZTrace's declared event counts are wrong: its event files say
  try {
    archive.unsupported_events = reader->read_events(summary, options).unsupported;
  } catch (const Error& e) {
    if (summary.store_failed()) throw;
    unreadable = e.what();
    return std::nullopt;
  }
  return archive;
}

EztraceInputs load_eztrace_inputs(const std::filesystem::path& sidecar_dir,
                                  std::vector<std::string>& warnings,
                                  const std::filesystem::path& temp_dir) {
  return load_eztrace_inputs(
      read_sidecars(sidecar_dir),
      [](const Sidecar& s) { return std::vector{s.trace_dir() / "eztrace_log.otf2"}; }, warnings,
      temp_dir);
}

EztraceInputs load_eztrace_inputs(const std::vector<Sidecar>& images,
                                  const ArchiveCandidates& candidates,
                                  std::vector<std::string>& warnings,
                                  const std::filesystem::path& temp_dir,
                                  const std::set<OTF2_LocationRef>& elsewhere) {
  // EZTrace names the archive after the program only: processes of one program that share a
  // trace directory share it (MPI ranks; others overwrite each other's).
  std::map<std::filesystem::path, std::vector<const Sidecar*>> by_archive;
  for (const auto& s : images) {
    if (!s.exited) continue;  // no trace: the merge reports the process
    std::vector<std::filesystem::path> where = candidates(s);
    auto found = std::find_if(where.begin(), where.end(),
                              [](const auto& p) { return std::filesystem::exists(p); });
    if (found != where.end()) {
      by_archive[std::filesystem::weakly_canonical(*found)].push_back(&s);
    } else if (!s.main_ns || s.finalize_ns) {
      // EZTrace finalized (or an older helper cannot tell) and the archive is not there.
      warnings.push_back(fmt::format("{} [{}]: no EZTrace archive at {}", s.program, s.pid,
                                     where.empty() ? s.trace_dir().string() : where[0].string()));
    }
  }
  EztraceInputs loaded;
  std::vector<EztraceInput>& out = loaded.traces;
  for (const auto& [anchor, procs] : by_archive) {
    const std::filesystem::path* found = &anchor;
    const std::filesystem::path dir = anchor.parent_path();
    std::string unreadable;
    std::optional<EztraceArchive> read = index_eztrace_archive(*found, temp_dir, unreadable);
    if (!read) {
      // Every process of the archive (MPI ranks share one) is without its user level.
      warnings.push_back(unreadable_warning(procs, unreadable));
      for (const Sidecar* s : procs) loaded.unreadable.push_back({*s, anchor, unreadable});
      continue;
    }
    auto archive = std::make_shared<const EztraceArchive>(std::move(*read));
    std::vector<OTF2_LocationRef> all;
    for (const auto& [loc, def] : archive->defs.locations) all.push_back(loc);
    for (const auto& [loc, ev] : archive->locations) {
      if (!archive->defs.locations.count(loc)) all.push_back(loc);
    }
    // MPI ranks write one archive, each its own locations (rank * chunk + thread). Processes
    // that are not ranks all start at location 0: a later one replaced the earlier one's
    // archive, and the last to exit owns it.
    std::set<uint64_t> seen;
    bool disjoint = true;
    for (const Sidecar* s : procs) {
      for (const auto& t : s->threads) disjoint = disjoint && seen.insert(t.location).second;
    }
    // A rank (EZTrace's MPI mode stamps with MPI_Wtime) owns its own locations even alone: the
    // merge of one host's part of a multi-node job has that host's ranks only (docs/cluster.md).
    const bool ranks = std::all_of(procs.begin(), procs.end(), [](const Sidecar* s) {
      return s->clock == "MPI_Wtime" && !s->threads.empty();
    });
    if ((procs.size() == 1 && !ranks) || !disjoint) {
      const Sidecar* owner = *std::max_element(
          procs.begin(), procs.end(),
          [](const Sidecar* a, const Sidecar* b) { return a->exit_ns < b->exit_ns; });
      for (const Sidecar* s : procs) {
        if (s == owner) continue;
        warnings.push_back(fmt::format(
            "{} [{}] and another process of the same program both wrote {}: EZTrace kept only "
            "one archive, the events of {} [{}] are lost",
            owner->program, owner->pid, dir.string(), s->program, s->pid));
      }
      out.push_back({*owner, archive, all});
      continue;
    }
    for (const Sidecar* s : procs) {
      std::vector<OTF2_LocationRef> own;
      for (const auto& t : s->threads) own.push_back(t.location);
      out.push_back({*s, archive, std::move(own)});
    }
    for (OTF2_LocationRef loc : all) {
      if (seen.count(loc) || elsewhere.count(loc)) continue;
      auto ev = archive->locations.find(loc);
      warnings.push_back(fmt::format(
          "{}: EZTrace location {} belongs to no process with alignment data; its {} events are "
          "left out",
          found->string(), loc, ev == archive->locations.end() ? 0 : ev->second.events));
    }
  }
  std::sort(out.begin(), out.end(), [](const EztraceInput& a, const EztraceInput& b) {
    return a.process.ctor_ns < b.process.ctor_ns;
  });
  return loaded;
}

}  // namespace ezio::converters
