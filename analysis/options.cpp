#include "analysis/options.h"

#include "common/error.h"

namespace ezio::analysis {

bool Filters::location_selected(const Definitions& defs, OTF2_LocationRef loc) const {
  if (threads.empty()) return true;
  const LocationDef* def = defs.location(loc);
  std::string id = std::to_string(loc);
  std::string tid;
  if (auto it = defs.location_tids.find(loc); it != defs.location_tids.end()) {
    tid = std::to_string(it->second);
  }
  for (auto& t : threads) {
    if (t == id || (!tid.empty() && t == tid)) return true;
    if (def && def->name.find(t) != std::string::npos) return true;
  }
  return false;
}

bool Filters::layer_selected(Layer l) const {
  if (layers.empty()) return true;
  for (auto& s : layers) {
    if (parse_layer(s) == l) return true;
  }
  return false;
}

bool Filters::region_selected(const RegionInfo& r) const {
  if (regions.empty()) return true;
  for (auto& s : regions) {
    if (r.canonical.find(s) != std::string::npos || r.name.find(s) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void Filters::validate() const {
  for (auto& s : layers) {
    if (!parse_layer(s)) {
      fail("unknown layer '{}' (expected user, syscall, vfs, fs, pagecache or block)", s);
    }
  }
}

void add_common_options(CLI::App& cmd, CommonOptions& o) {
  // Existence is checked by the reader so that every bad path gets the same kind of message.
  cmd.add_option("TRACE", o.trace, "OTF2 archive: the .otf2 anchor file or its directory")
      ->required();
  auto* json = cmd.add_flag("--json", o.json, "machine-readable JSON on stdout");
  auto* csv = cmd.add_flag("--csv", o.csv, "CSV on stdout");
  json->excludes(csv);
}

void add_filter_options(CLI::App& cmd, Filters& f, bool with_region) {
  cmd.add_option("--thread", f.threads,
                 "only this thread: location id, TID, or part of the location name (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--layer", f.layers,
                 "only this layer: user, syscall, vfs, fs, pagecache, block (repeatable)")
      ->allow_extra_args(false);
  if (with_region) {
    cmd.add_option("--region", f.regions, "only regions whose name contains this text (repeatable)")
        ->allow_extra_args(false);
  }
}

}  // namespace ezio::analysis
