// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/assemble_part.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>

#include "common/error.h"

namespace ezio::converters {
namespace {

namespace fs = std::filesystem;
using otf2::Definitions;
using otf2::Ref;

struct ReaderCloser {
  void operator()(OTF2_Reader* r) const { OTF2_Reader_Close(r); }
};
struct DefCallbacksDeleter {
  void operator()(OTF2_DefReaderCallbacks* c) const { OTF2_DefReaderCallbacks_Delete(c); }
};

OTF2_CallbackCode count_mapping(void* n, OTF2_MappingType, const OTF2_IdMap*) {
  ++*static_cast<uint64_t*>(n);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode count_offset(void* n, OTF2_TimeStamp, int64_t, double) {
  ++*static_cast<uint64_t*>(n);
  return OTF2_CALLBACK_SUCCESS;
}

// What the part's files are like, beyond its global definitions: the size of the chunks its event
// files are written in (0: unknown), and how many mapping tables and clock offsets its local
// definition files hold (a part that is itself an assembled archive: its events mean nothing
// without them, and a location's local definitions are written anew).
struct PartFiles {
  uint64_t event_chunk = 0;
  uint64_t local_definitions = 0;
};

PartFiles part_files(const fs::path& anchor, const Definitions& d) {
  PartFiles f;
  std::unique_ptr<OTF2_Reader, ReaderCloser> r(OTF2_Reader_Open(anchor.c_str()));
  uint64_t definitions = 0;
  if (!r || OTF2_Reader_GetChunkSize(r.get(), &f.event_chunk, &definitions) != OTF2_SUCCESS ||
      OTF2_Reader_SetSerialCollectiveCallbacks(r.get()) != OTF2_SUCCESS) {
    return {};
  }
  for (const auto& entry : d.locations) OTF2_Reader_SelectLocation(r.get(), entry.first);
  if (OTF2_Reader_OpenDefFiles(r.get()) != OTF2_SUCCESS) return f;
  std::unique_ptr<OTF2_DefReaderCallbacks, DefCallbacksDeleter> cb(OTF2_DefReaderCallbacks_New());
  OTF2_DefReaderCallbacks_SetMappingTableCallback(cb.get(), count_mapping);
  OTF2_DefReaderCallbacks_SetClockOffsetCallback(cb.get(), count_offset);
  for (const auto& entry : d.locations) {
    OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r.get(), entry.first);
    if (!dr) continue;
    uint64_t read = 0;
    OTF2_Reader_RegisterDefCallbacks(r.get(), dr, cb.get(), &f.local_definitions);
    OTF2_Reader_ReadAllLocalDefinitions(r.get(), dr, &read);
    OTF2_Reader_CloseDefReader(r.get(), dr);
  }
  OTF2_Reader_CloseDefFiles(r.get());
  return f;
}

fs::path event_file(const HostPart& p, OTF2_LocationRef id) {
  return p.anchor.parent_path() / p.anchor.stem() / fmt::format("{}.evt", id);
}

// Whether a file of the part can be hard-linked into the output directory: it cannot across file
// systems, nor, with fs.protected_hardlinks, when the user neither owns nor may write it.
std::string link_obstacle(const fs::path& file, const fs::path& out_dir) {
  const fs::path probe = out_dir / fmt::format(".link-probe-{}", ::getpid());
  std::error_code ec;
  fs::create_hard_link(file, probe, ec);
  if (ec) {
    return fmt::format("its event files cannot be linked into {}: {}", out_dir.string(),
                       ec.message());
  }
  fs::remove(probe, ec);
  return "";
}

std::string paradigm_obstacle(const Definitions& d, ParadigmOrder& order) {
  ParadigmOrder next = order;
  for (const auto& [r, par] : d.io_paradigms) {
    const std::string& ident = d.str(par.identification);
    const size_t at = size_t(std::find(next.begin(), next.end(), ident) - next.begin());
    if (at == next.size()) next.push_back(ident);
    if (at != r) {
      return fmt::format(
          "its I/O paradigm {} is {} in the part, {} in the job archive (OTF2 has "
          "no mapping table for I/O paradigms)",
          ident, r, at);
    }
  }
  for (const auto& [r, h] : d.io_handles) {
    if (!d.io_paradigms.count(h.paradigm)) {
      return fmt::format("its I/O handle {} names no defined I/O paradigm", r);
    }
  }
  order = std::move(next);
  return "";
}

// Every definition of the part in the job archive, and the ids that change.
void map_definitions(Output& out, const Definitions& d, const Definitions& comm_defs,
                     otf2::LocalDefinitions& local) {
  DefinitionMapper map(d, out.shared, {}, &comm_defs);
  for (const auto& entry : d.io_paradigms) map.io_paradigm(entry.first);  // ids kept (checked)
  for (const auto& entry : d.strings) {
    local.map(OTF2_MAPPING_STRING, entry.first, map.string(entry.first));
  }
  for (const auto& entry : d.attributes) {
    local.map(OTF2_MAPPING_ATTRIBUTE, entry.first, map.attribute(entry.first));
  }
  for (const auto& entry : d.regions) {
    local.map(OTF2_MAPPING_REGION, entry.first, map.region(entry.first));
  }
  for (const auto& entry : d.io_files) {
    local.map(OTF2_MAPPING_IO_FILE, entry.first, map.io_file(entry.first));
  }
  for (const auto& entry : d.io_handles) {
    local.map(OTF2_MAPPING_IO_HANDLE, entry.first, map.io_handle(entry.first));
  }
  for (const auto& entry : d.metric_classes) {
    local.map(OTF2_MAPPING_METRIC, entry.first, map.metric(entry.first));
  }
  // An event's comm or group id means its first definition (comm_mapper.h).
  std::set<Ref> seen;
  for (const auto& c : comm_defs.comms) {
    if (seen.insert(c.id).second) local.map(OTF2_MAPPING_COMM, c.id, map.comm(c.id));
  }
  seen.clear();
  for (const auto& g : comm_defs.groups) {
    if (seen.insert(g.id).second) {
      local.map(OTF2_MAPPING_GROUP, g.id, out.comms.group(comm_defs, g.id));
    }
  }
}

// The part's clock map as OTF2 applies it: offsets at the start and end measurements, linear in
// between and extrapolated beyond (recorder::ClockMap::server_time computes the same).
void clock_offsets(const HostPart& p, otf2::LocalDefinitions& local) {
  if (!p.clock) return;  // the reference host: its clock is the timeline
  recorder::ClockOffset a = p.clock->start, b = p.clock->end;
  if (b.at_ns < a.at_ns) std::swap(a, b);
  if (b.at_ns == a.at_ns) b.at_ns = a.at_ns + 1, b.offset_ns = a.offset_ns;  // a constant shift
  for (const recorder::ClockOffset& o : {a, b}) {
    local.clock_offsets.push_back({uint64_t(o.at_ns), o.offset_ns, double(o.error_ns)});
  }
}

}  // namespace

std::string assembly_obstacle(const HostPart& p, const Definitions& d, const fs::path& out_dir,
                              ParadigmOrder& order) {
  if (!p.incomplete.empty()) {
    return "its recording is not whole: its event files may end in a torn chunk";
  }
  const PartFiles files = part_files(p.anchor, d);
  if (files.event_chunk != otf2::ArchiveWriter::kEventChunkBytes) {
    return fmt::format("its event chunks are {} bytes, the job archive's {}", files.event_chunk,
                       otf2::ArchiveWriter::kEventChunkBytes);
  }
  if (files.local_definitions > 0) {
    return fmt::format("its locations hold {} mapping tables or clock offsets of their own",
                       files.local_definitions);
  }
  fs::path linked;
  for (const auto& [id, l] : d.locations) {
    std::error_code ec;
    const fs::path f = event_file(p, id);
    if (!fs::exists(f, ec)) {
      if (l.events == 0) continue;
      return fmt::format("location {} declares {} events but has no event file", id, l.events);
    }
    if (linked.empty()) linked = f;
  }
  if (!linked.empty()) {
    if (std::string why = link_obstacle(linked, out_dir); !why.empty()) return why;
  }
  return paradigm_obstacle(d, order);
}

uint64_t assemble_part(Output& out, const HostPart& p, const Definitions& d,
                       const Definitions& comm_defs, uint64_t shift,
                       const std::set<OTF2_LocationRef>& dropped, std::vector<EventLink>& links) {
  auto local = std::make_shared<otf2::LocalDefinitions>();
  map_definitions(out, d, comm_defs, *local);
  clock_offsets(p, *local);
  uint64_t events = 0;
  for (const auto& [id, l] : d.locations) {
    if (dropped.count(id)) continue;
    out.w.external_events(id + shift, l.events);
    out.w.local_definitions(id + shift, local);
    std::error_code ec;
    if (const fs::path f = event_file(p, id); fs::exists(f, ec)) {
      links.push_back({f, out.w.event_file(id + shift)});
    }
    events += l.events;
  }
  return events;
}

void link_event_files(const std::vector<EventLink>& links) {
  for (const EventLink& l : links) {
    std::error_code ec;
    fs::create_hard_link(l.from, l.to, ec);
    if (ec) fail("cannot link {} to {}: {}", l.from.string(), l.to.string(), ec.message());
  }
}

}  // namespace ezio::converters
