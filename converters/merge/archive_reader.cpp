#include <set>

#include "common/otf2/reader.h"
#include "converters/merge/archive_model.h"

namespace ezio::converters {
namespace {

class Collector : public otf2::EventVisitor {
 public:
  explicit Collector(Archive& archive) : archive_(archive) {}
  void begin_location(OTF2_LocationRef loc) override { events_ = &archive_.events[loc]; }
  void event(OTF2_LocationRef, const Event& e) override { events_->push_back(e); }

 private:
  Archive& archive_;
  std::vector<Event>* events_ = nullptr;
};

class Summarizer : public otf2::EventVisitor {
 public:
  explicit Summarizer(EztraceArchive& archive) : archive_(archive) {
    for (const auto& [ref, r] : archive.defs.regions) {
      if (archive.defs.str(r.name) == "EZTrace finalize") finalize_.insert(ref);
    }
  }
  void begin_location(OTF2_LocationRef loc) override {
    loc_ = &archive_.locations[loc];
    archive_.events->begin_location(loc);
  }
  void end_location(OTF2_LocationRef) override { archive_.events->end_location(); }
  void event(OTF2_LocationRef, const Event& e) override {
    archive_.events->append(e);
    if (loc_->events++ == 0) loc_->first_time = e.time;
    if (!loc_->finalizes && e.kind == EventKind::Enter && finalize_.count(e.ref)) {
      loc_->finalizes = true;
      loc_->finalize_time = e.time;
    }
  }

 private:
  EztraceArchive& archive_;
  std::set<Ref> finalize_;
  UserLocation* loc_ = nullptr;
};

// EZTrace's declared event counts are wrong: its event files say.
otf2::ReadOptions lenient() {
  otf2::ReadOptions options;
  options.lenient = true;
  return options;
}

// Reads an archive's definitions, then streams its events into a Visitor of the result.
template <typename Visitor, typename Result>
void read_into(otf2::ArchiveReader& reader, Result& archive) {
  archive.anchor = reader.anchor();
  archive.defs = reader.defs();
  Visitor visitor(archive);
  archive.unsupported_events = reader.read_events(visitor, lenient()).unsupported;
}

}  // namespace

EztraceArchive index_eztrace_archive(const std::filesystem::path& anchor,
                                     const std::filesystem::path& temp_dir) {
  otf2::ArchiveReader reader(anchor);
  EztraceArchive archive;
  archive.events = std::make_shared<EventStore>(temp_dir);
  read_into<Summarizer>(reader, archive);
  return archive;
}

Archive read_archive(const std::filesystem::path& anchor) {
  otf2::ArchiveReader reader(anchor);
  Archive archive;
  read_into<Collector>(reader, archive);
  return archive;
}

}  // namespace ezio::converters
