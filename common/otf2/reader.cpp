// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/reader.h"

#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/otf2/anchor.h"
#include "common/otf2/check.h"
#include "common/otf2/chunk_memory.h"
#include "common/otf2/model_upgrade.h"

namespace ezio::otf2 {
namespace {

// OTF2 prints its own errors to stderr; the capture keeps them so that our message can say what
// went wrong, and nothing else is printed.
using QuietErrors = ErrorCapture;

[[noreturn]] void fail_otf2(const std::filesystem::path& anchor, std::string_view what,
                            OTF2_ErrorCode code) {
  std::string detail =
      ErrorCapture::last().empty() ? OTF2_Error_GetDescription(code) : ErrorCapture::last();
  fail("{}: not a readable OTF2 archive: {} failed ({})", anchor.string(), what, detail);
}

void check_read(OTF2_ErrorCode code, const std::filesystem::path& anchor, std::string_view what) {
  if (code != OTF2_SUCCESS) fail_otf2(anchor, what, code);
}

// A reader of one part of the archive (global definitions, a location's definitions or events),
// closed on every path out, exceptions included.
template <typename T, OTF2_ErrorCode (*Close)(OTF2_Reader*, T*)>
class PartReader {
 public:
  PartReader(OTF2_Reader* r, T* part) : r_(r), part_(part) {}
  ~PartReader() {
    if (part_) Close(r_, part_);
  }
  PartReader(const PartReader&) = delete;
  PartReader& operator=(const PartReader&) = delete;
  T* get() const { return part_; }

 private:
  OTF2_Reader* r_;
  T* part_;
};
using GlobalDefReader = PartReader<OTF2_GlobalDefReader, OTF2_Reader_CloseGlobalDefReader>;
using DefReader = PartReader<OTF2_DefReader, OTF2_Reader_CloseDefReader>;
using EvtReader = PartReader<OTF2_EvtReader, OTF2_Reader_CloseEvtReader>;

// The event (or local definition) files of the selected locations, closed on every path out;
// close() says whether closing worked.
class OpenFiles {
 public:
  OpenFiles(OTF2_Reader* r, bool open, OTF2_ErrorCode (*close)(OTF2_Reader*))
      : r_(open ? r : nullptr), close_(close) {}
  ~OpenFiles() { close(); }
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;
  bool is_open() const { return r_ != nullptr; }
  OTF2_ErrorCode close() {
    OTF2_Reader* r = r_;
    r_ = nullptr;
    return r ? close_(r) : OTF2_SUCCESS;
  }

 private:
  OTF2_Reader* r_;
  OTF2_ErrorCode (*close_)(OTF2_Reader*);
};

template <typename T, void (*Delete)(T*)>
struct CallbacksDeleter {
  void operator()(T* c) const { Delete(c); }
};
using DefCallbacksPtr = std::unique_ptr<
    OTF2_GlobalDefReaderCallbacks,
    CallbacksDeleter<OTF2_GlobalDefReaderCallbacks, OTF2_GlobalDefReaderCallbacks_Delete>>;
using EvtCallbacksPtr =
    std::unique_ptr<OTF2_EvtReaderCallbacks,
                    CallbacksDeleter<OTF2_EvtReaderCallbacks, OTF2_EvtReaderCallbacks_Delete>>;

constexpr uint64_t kBatch = 1 << 20;

}  // namespace

void ArchiveReader::Closer::operator()(OTF2_Reader* r) const {
  QuietErrors quiet;
  OTF2_Reader_Close(r);
}

ArchiveReader::ArchiveReader(const std::filesystem::path& path) : anchor_(find_anchor(path)) {
  prepare_chunk_memory();
  if (!anchor_parses(anchor_)) {
    fail("{}: not a readable OTF2 archive (corrupted anchor file)", anchor_.string());
  }
  QuietErrors quiet;
  reader_.reset(OTF2_Reader_Open(anchor_.c_str()));
  if (!reader_) {
    fail("{}: not a readable OTF2 archive{}", anchor_.string(),
         ErrorCapture::last().empty() ? "" : fmt::format(" ({})", ErrorCapture::last()));
  }
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader_.get()), anchor_,
             "setting up the reader");
  read_definitions();
}

ArchiveReader::~ArchiveReader() = default;

void ArchiveReader::read_definitions() {
  OTF2_Reader* r = reader_.get();
  GlobalDefReader gdr(r, OTF2_Reader_GetGlobalDefReader(r));
  if (!gdr.get()) {
    fail_otf2(anchor_, "opening the global definitions", OTF2_ERROR_FILE_CAN_NOT_OPEN);
  }
  DefCallbacksPtr cb(OTF2_GlobalDefReaderCallbacks_New());
  set_definition_callbacks(cb.get());
  check_read(OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr.get(), cb.get(), &defs_), anchor_,
             "registering definition callbacks");
  uint64_t n = 0;
  check_read(OTF2_Reader_ReadAllGlobalDefinitions(r, gdr.get(), &n), anchor_,
             "reading the global definitions");
}

// Local definition files are optional: mapping tables and clock offsets, which OTF2 applies to
// the events it reads.
void ArchiveReader::read_local_definitions(OTF2_LocationRef id, bool lenient) {
  // OTF2 keeps what they define (mapping tables, clock offsets) with the location for the reader's
  // life: a second pass over the events needs no second read (a def reader buffer is a whole
  // chunk, 16 MiB for EZTrace's archives, zeroed by OTF2).
  if (!local_definitions_read_.insert(id).second) return;
  OTF2_Reader* r = reader_.get();
  DefReader dr(r, OTF2_Reader_GetDefReader(r, id));
  if (!dr.get()) return;
  uint64_t n = 0;
  OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(r, dr.get(), &n);
  if (code != OTF2_SUCCESS && !lenient) {
    fail_otf2(anchor_, fmt::format("reading the definitions of location {}", id), code);
  }
}

ReadProgress ArchiveReader::read_events(EventVisitor& given, const ReadOptions& options) {
  // Archives of trace model 2 are read as model 1 (model_upgrade.h).
  std::unique_ptr<ModelUpgrade> upgrade =
      options.as_written ? nullptr : ModelUpgrade::for_archive(defs_, given);
  EventVisitor& visitor = upgrade ? *upgrade : given;
  QuietErrors quiet;
  OTF2_Reader* r = reader_.get();
  ReadProgress prog;
  prog.locations = defs_.locations.size();
  for (auto& [id, loc] : defs_.locations) prog.declared_events += loc.events;
  if (defs_.locations.empty()) return prog;

  for (auto& [id, loc] : defs_.locations) {
    check_read(OTF2_Reader_SelectLocation(r, id), anchor_, "selecting a location");
  }
  OpenFiles def_files(r, OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS, OTF2_Reader_CloseDefFiles);
  check_read(OTF2_Reader_OpenEvtFiles(r), anchor_, "opening the event files");
  OpenFiles evt_files(r, true, OTF2_Reader_CloseEvtFiles);
  EvtCallbacksPtr cb(OTF2_EvtReaderCallbacks_New());
  set_event_callbacks(cb.get());
  EventCursor cursor;
  cursor.visitor = &visitor;

  for (auto& [id, loc] : defs_.locations) {
    if (options.select && !options.select(id)) {
      ++prog.locations_done;
      continue;
    }
    if (def_files.is_open()) read_local_definitions(id, options.lenient);
    EvtReader er(r, OTF2_Reader_GetEvtReader(r, id));
    // A writer creates no event file for a location without events.
    if (!er.get() && (options.lenient || loc.events == 0)) {
      if (!options.lenient) {
        visitor.begin_location(id);
        visitor.end_location(id);
      }
      ++prog.locations_done;
      continue;
    }
    if (!er.get()) {
      fail_otf2(anchor_, fmt::format("opening the events of location {}", id),
                OTF2_ERROR_FILE_CAN_NOT_OPEN);
    }
    check_read(OTF2_Reader_RegisterEvtCallbacks(r, er.get(), cb.get(), &cursor), anchor_,
               "registering event callbacks");
    visitor.begin_location(id);
    cursor.delivered = 0;
    for (;;) {
      uint64_t got = 0;
      OTF2_ErrorCode code = OTF2_Reader_ReadLocalEvents(r, er.get(), kBatch, &got);
      prog.events += got;
      if (cursor.error) std::rethrow_exception(cursor.error);
      if (code != OTF2_SUCCESS) {
        fail_otf2(anchor_,
                  fmt::format("reading the events of location {} ({})", id, defs_.str(loc.name)),
                  code);
      }
      if (options.progress) options.progress(prog);
      if (got < kBatch) break;
    }
    // OTF2 skips the records it has no callback for; the position still counts them.
    uint64_t position = 0;
    OTF2_EvtReader_GetPos(er.get(), &position);
    if (position > cursor.delivered) prog.unsupported += position - cursor.delivered;
    visitor.end_location(id);
    ++prog.locations_done;
    if (options.progress) options.progress(prog);
  }
  check_read(evt_files.close(), anchor_, "closing the event files");
  return prog;
}

void verify_written(const std::filesystem::path& anchor) {
  ArchiveReader reader(anchor);
  std::filesystem::path events = anchor.parent_path() / anchor.stem();
  for (const auto& [id, loc] : reader.defs().locations) {
    if (loc.events == 0) continue;
    std::error_code ec;
    auto size = std::filesystem::file_size(events / fmt::format("{}.evt", id), ec);
    if (ec || size == 0) {
      fail("{}: location {} declares {} events but its event file is {}", anchor.string(), id,
           loc.events, ec ? "missing" : "empty");
    }
  }
}

namespace {

class Collector : public EventVisitor {
 public:
  explicit Collector(Archive& archive) : archive_(archive) {}
  void begin_location(OTF2_LocationRef loc) override { events_ = &archive_.events[loc]; }
  void event(OTF2_LocationRef, const Event& e) override { events_->push_back(e); }

 private:
  Archive& archive_;
  std::vector<Event>* events_ = nullptr;
};

}  // namespace

Archive read_archive(const std::filesystem::path& anchor, bool as_written) {
  ArchiveReader reader(anchor);
  Archive archive;
  archive.anchor = reader.anchor();
  archive.defs = reader.defs();
  Collector collector(archive);
  ReadOptions options;
  options.lenient = true;
  options.as_written = as_written;
  archive.unsupported_events = reader.read_events(collector, options).unsupported;
  return archive;
}

}  // namespace ezio::otf2
