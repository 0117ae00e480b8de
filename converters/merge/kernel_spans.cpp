// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/kernel_spans.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "common/error.h"
#include "common/otf2/reader.h"

namespace ezio::converters {
namespace {

const std::string kNoCall;

bool is_request(EventKind k) {
  return k >= EventKind::IoOperationBegin && k <= EventKind::IoOperationCancelled;
}

class Indexer : public otf2::EventVisitor {
 public:
  // copy: the events go into index.events too (read from the archive; not when replayed from it).
  Indexer(KernelIndex& index, const std::vector<std::string>& own_dirs, bool copy)
      : index_(index), own_dirs_(own_dirs), copy_(copy) {
    for (const auto& [ref, a] : index.defs.attributes) {
      if (index.defs.str(a.name) == "call.id") call_id_ = ref;
    }
  }

  void begin_location(OTF2_LocationRef loc) override {
    loc_ = &index_.locations[loc];
    loc_->spans = SpanList(index_.store.get(), index_.store->size());
    cutter_ = SpanCutter();
    if (copy_) index_.events->begin_location(loc);
  }
  void end_location(OTF2_LocationRef) override {
    if (!cutter_.complete()) loc_->spans.append(span_);  // a call still running at the end
    if (copy_) index_.events->end_location();
  }

  void event(OTF2_LocationRef, const Event& e) override {
    if (copy_) index_.events->append(e);
    if (cutter_.complete()) start_span(e);
    Span& s = span_;
    const size_t index = loc_->spans.size();
    s.t1 = e.time;
    if (id_from_operation_ && e.kind == EventKind::IoOperationBegin) {
      s.call_id = e.b;  // trace model 2: a read, write or flush's call id is its matching id
      id_from_operation_ = false;
    }
    if (e.kind == EventKind::IoCreateHandle) s.created = e.ref;
    if (is_io_event(e.kind)) {
      if (const Handle& h = handle(e.ref); h.own) {
        s.own = true;
        loc_->own_files[index].push_back(h.path);
      }
    }
    cutter_.add(e);
    if (cutter_.complete()) loc_->spans.append(s);
  }

 private:
  void start_span(const Event& e) {
    Span s;
    s.t0 = e.time;
    s.call = &kNoCall;
    s.enter = e.kind == EventKind::Enter;
    if (s.enter) {
      if (auto r = index_.defs.regions.find(e.ref); r != index_.defs.regions.end()) {
        s.call = &index_.defs.str(r->second.canonical);
      }
    }
    id_from_operation_ = false;
    if (s.enter || is_request(e.kind)) {
      std::optional<uint64_t> id = call_id(e);
      s.call_id = id.value_or(0);
      id_from_operation_ = s.enter && !id;
    }
    if (is_request(e.kind)) {
      loc_->requests[loc_->spans.size()] = {e.ref, e.b, e.kind == EventKind::IoOperationBegin};
    }
    span_ = s;
  }

  std::optional<uint64_t> call_id(const Event& e) const {
    for (const Attribute& a : e.attributes) {
      if (a.id == call_id_ && a.type == OTF2_TYPE_UINT64) return a.value.uint64;
    }
    return std::nullopt;
  }

  // A handle's path, normalized (the recorder keeps paths as the process named them: `-o ../out`
  // gives /cwd/../out/...), and whether it is under an own directory.
  struct Handle {
    const std::string* path = nullptr;
    bool own = false;
  };
  Handle handle(Ref ref) {
    // Looked up for every I/O event: the low (dense) handle ids through a vector.
    if (ref < seen_.size() && seen_[ref].path) return seen_[ref];
    const std::string& path = find_normal_path(ref);
    const Handle h{&path, path_under(path, own_dirs_)};
    if (ref < (1u << 20)) {
      if (ref >= seen_.size()) seen_.resize(ref + 1);
      seen_[ref] = h;
    }
    return h;
  }
  const std::string& find_normal_path(Ref handle) {
    auto [it, added] = index_.normal_paths.try_emplace(handle);
    if (added) {
      if (auto path = index_.defs.handle_path(handle)) {
        it->second = std::filesystem::path(*path).lexically_normal().string();
      }
    }
    return it->second;
  }

  KernelIndex& index_;
  const std::vector<std::string>& own_dirs_;
  const bool copy_;
  Ref call_id_ = OTF2_UNDEFINED_ATTRIBUTE;
  KernelLocation* loc_ = nullptr;
  SpanCutter cutter_;
  Span span_;  // the one being read
  // span_ is a call whose ENTER has no call.id (model 2): its I/O operation's matching id is it.
  bool id_from_operation_ = false;
  std::vector<Handle> seen_;  // by handle id: its entry of index_.normal_paths, own or not
};

// True when the recorder's copy holds, for every location of the archive, as many events as the
// archive declares (the recorder's counts are right, unlike EZTrace's), and no other.
bool holds_the_archive(const EventStore& recorded, const Definitions& defs) {
  for (const auto& [loc, extent] : recorded.locations()) {
    auto def = defs.locations.find(loc);
    if (def == defs.locations.end() || def->second.events != extent.events) return false;
  }
  for (const auto& [loc, def] : defs.locations) {
    if (def.events && !recorded.locations().count(loc)) return false;
  }
  return true;
}

// Whether the archive has the event file of each location it defines.
bool has_event_files(const std::filesystem::path& anchor, const Definitions& defs) {
  const std::filesystem::path dir = anchor.parent_path() / anchor.stem();
  for (const auto& [loc, def] : defs.locations) {
    if (!std::filesystem::exists(dir / fmt::format("{}.evt", loc))) return false;
  }
  return true;
}

// Every location the archive defines has an event file (otf2::ArchiveWriter writes one for a
// location without events): the replay visits them all, as reading the archive does, and the
// store lists them all, as the copy made while reading it does.
void replay(EventStore& events, const Definitions& defs, otf2::EventVisitor& visitor) {
  for (const auto& [loc, def] : defs.locations) {
    if (!events.locations().count(loc)) {
      events.begin_location(loc);
      events.end_location();
    }
    visitor.begin_location(loc);
    EventStore::Cursor cursor(events, loc);
    while (const Event* e = cursor.next()) visitor.event(loc, *e);
    visitor.end_location(loc);
  }
}

}  // namespace

bool path_under(const std::string& path, const std::vector<std::string>& dirs) {
  for (const auto& d : dirs) {
    if (path.size() > d.size() && path.compare(0, d.size(), d) == 0 && path[d.size()] == '/') {
      return true;
    }
  }
  return false;
}

KernelIndex index_kernel_spans(const std::filesystem::path& anchor,
                               const std::vector<std::string>& own_dirs,
                               const std::filesystem::path& temp_dir,
                               std::unique_ptr<EventStore> recorded) {
  KernelIndex index;
  otf2::ArchiveReader reader(anchor);
  index.store = std::make_unique<SpanStore>(temp_dir);
  index.anchor = reader.anchor();
  index.defs = reader.defs();
  if (recorded) {
    recorded->seal();
    if (holds_the_archive(*recorded, index.defs)) {
      index.events = std::move(recorded);
      index.recorded = true;
      Indexer indexer(index, own_dirs, false);
      replay(*index.events, index.defs, indexer);
      return index;
    }
    // eziotrace run writes no event file beside its copy unless the part is kept.
    if (!has_event_files(anchor, index.defs)) {
      fail(
          "{}: the recorder's copy of its events does not match the archive's definitions, and "
          "the archive has no events of its own (kept with --keep-parts only)",
          anchor.string());
    }
    spdlog::warn("{}: the recorder's copy of its events does not match the archive; reading it",
                 anchor.string());
  }
  index.events = std::make_unique<EventStore>(temp_dir);
  Indexer indexer(index, own_dirs, true);
  otf2::ReadOptions options;
  options.lenient = true;  // as read_archive: the kernel's counts are right, EZTrace's are not
  // The events are copied of the archive's trace model, as the recorder's copy is: the merged
  // archive keeps it (EZIOTRACE::TRACE_MODEL), its readers read model 2 as model 1.
  options.as_written = true;
  index.unsupported_events = reader.read_events(indexer, options).unsupported;
  return index;
}

}  // namespace ezio::converters
