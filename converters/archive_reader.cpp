#include "common/otf2/reader.h"
#include "converters/archive_model.h"

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

}  // namespace

Archive read_archive(const std::filesystem::path& anchor) {
  otf2::ArchiveReader reader(anchor);
  Archive archive;
  archive.anchor = reader.anchor();
  archive.defs = reader.defs();
  Collector collector(archive);
  otf2::ReadOptions options;
  options.lenient = true;  // EZTrace's declared event counts are wrong: its event files say
  archive.unsupported_events = reader.read_events(collector, options).unsupported;
  return archive;
}

}  // namespace ezio::converters
