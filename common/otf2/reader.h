// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Reads an OTF2 archive through OTF2's C API; every reader of eziotrace goes through here. The
// global definitions are read once, as the archive wrote them (definitions.h); then the events are
// streamed location by location, in file order within each location (events.h). Memory does not
// grow with the number of events: each location's event file is opened, read in batches and
// closed before the next one. Every failure is an ezio::Error naming the archive; OTF2's own
// messages are kept for it instead of being printed.
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "common/otf2/definitions.h"
#include "common/otf2/events.h"

namespace ezio::otf2 {

struct ReadProgress {
  uint64_t events = 0;           // read so far
  uint64_t declared_events = 0;  // sum of the locations' declared counts (may be wrong)
  size_t locations_done = 0;
  size_t locations = 0;
  uint64_t unsupported = 0;  // records of kinds that EventKind does not hold: skipped
};

struct ReadOptions {
  // Locations for which it returns false are skipped without being read (default: none).
  std::function<bool(OTF2_LocationRef)> select;
  // Called between batches of events.
  std::function<void(const ReadProgress&)> progress;
  // For archives whose declared event counts are wrong (EZTrace's): a location without an event
  // file is then not visited at all, whatever it declares, and local definitions that cannot be
  // read are ignored. Otherwise such a location must declare no events (it is visited, empty) and
  // unreadable local definitions are an error.
  bool lenient = false;
  // The events as the archive holds them, even of trace model 2 (which is otherwise read as
  // model 1: model_upgrade.h); for the tests of the models.
  bool as_written = false;
};

class ArchiveReader {
 public:
  // `path` is the anchor (.otf2) file or a directory holding exactly one. Throws ezio::Error with
  // a message naming the path when it is not a readable archive or its definitions are corrupt.
  explicit ArchiveReader(const std::filesystem::path& path);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  const Definitions& defs() const { return defs_; }
  const std::filesystem::path& anchor() const { return anchor_; }

  // Streams all events to `visitor` and returns what was read. Exceptions thrown by the visitor
  // propagate after OTF2 has been left cleanly.
  ReadProgress read_events(EventVisitor& visitor, const ReadOptions& options = {});

 private:
  struct Closer {
    void operator()(OTF2_Reader* r) const;
  };
  void read_definitions();
  void read_local_definitions(OTF2_LocationRef id, bool lenient);

  std::filesystem::path anchor_;
  std::unique_ptr<OTF2_Reader, Closer> reader_;
  Definitions defs_;
  std::set<OTF2_LocationRef> local_definitions_read_;
};

// Reads back an archive a writer has just closed, before it is published: the anchor and the global
// definitions open with the OTF2 reader, and every location that declares events has a non-empty
// event file. Throws ezio::Error saying what is wrong.
void verify_written(const std::filesystem::path& anchor);

// A whole archive in memory, each location's events as the archive wrote them: for tests and
// small archives (the analyzers and the merge stream). Read leniently (ReadOptions::lenient):
// locations without an event file have no entry.
struct Archive {
  std::filesystem::path anchor;
  Definitions defs;
  std::map<OTF2_LocationRef, std::vector<Event>> events;
  uint64_t unsupported_events = 0;  // records of kinds EventKind does not hold
};
// Throws ezio::Error when the archive cannot be read.
// as_written: see ReadOptions.
Archive read_archive(const std::filesystem::path& anchor, bool as_written = false);

}  // namespace ezio::otf2
