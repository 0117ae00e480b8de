// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/observed.h"

#include <string_view>
#include <vector>

#include "common/schema/properties.h"

namespace ezio::analysis {
namespace {

constexpr std::string_view kPrefix = schema::kProbePrefix;

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::vector<std::string_view> split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  for (size_t at; (at = s.find(sep)) != std::string_view::npos; s.remove_prefix(at + sep.size())) {
    out.push_back(s.substr(0, at));
  }
  out.push_back(s);
  return out;
}

// The FS layer's property is one part per file system, "ext4: fentry/fexit ...; xfs: tp_btf/...;
// btrfs: none; iomap: tp_btf/iomap_dio_rw_begin" (recorder/probe/probe.cpp, plan_fs).
Observed fs_observed(std::string_view hooks, Op op) {
  size_t seeing = 0, file_systems = 0;
  bool iomap = false;
  for (std::string_view part : split(hooks, "; ")) {
    auto colon = part.find(": ");
    if (colon == std::string_view::npos) continue;
    std::string_view fs = part.substr(0, colon), h = part.substr(colon + 2);
    if (fs == "iomap") {
      iomap = true;
      continue;
    }
    ++file_systems;
    bool exact = contains(h, "fentry/fexit") || contains(h, "kprobe/kretprobe");
    bool tp = op == Op::kRead    ? contains(h, "_read")
              : op == Op::kWrite ? contains(h, "write")
                                 : contains(h, "sync");
    if (exact || (contains(h, "tp_btf/") && tp)) ++seeing;
  }
  if (file_systems > 0 && seeing == file_systems) return Observed::kAll;
  // iomap's tracepoint sees the direct I/O of ext4 and xfs, in both directions.
  if (seeing > 0 || (iomap && op != Op::kOther)) return Observed::kPartial;
  return Observed::kNone;
}

// The page-cache row counts pages looked up (read), dirtied (write) and evicted (other).
Observed pagecache_observed(std::string_view hooks, Op op) {
  std::string_view tp = op == Op::kRead    ? "mm_filemap_get_pages"
                        : op == Op::kWrite ? "writeback_dirty_folio"
                                           : "mm_filemap_delete_from_page_cache";
  return contains(hooks, tp) ? Observed::kAll : Observed::kNone;
}

// HDF5 and MPI-IO are recorded by modules of our own, which define their IoParadigm and name
// their regions after the functions: either in the archive says the module was there.
bool upper_layer_recorded(const Definitions& defs, Layer layer) {
  for (const auto& [id, p] : defs.io_paradigms) {
    if (layer_of_paradigm(p) == layer) return true;
  }
  for (const auto& [id, r] : defs.regions) {
    if (layer_of(r.canonical) == layer) return true;
  }
  return false;
}

}  // namespace

Observed observed(const Definitions& defs, Layer layer, Op op) {
  if (is_user_level(layer) && layer != Layer::kUser) {
    return upper_layer_recorded(defs, layer) ? Observed::kAll : Observed::kNone;
  }
  return observed(defs.node_string_properties, layer, op);
}

Observed observed(const std::map<std::string, std::string>& props, Layer layer, Op op) {
  if (is_user_level(layer) && layer != Layer::kUser) return Observed::kUnknown;
  auto any = props.lower_bound(std::string(kPrefix));
  if (any == props.end() || !any->first.starts_with(kPrefix)) return Observed::kUnknown;
  // A kernel recording merged with EZTrace's trace has the merge's alignment verdict; without it
  // (`eziotrace record`), no user-level call was observed.
  if (layer == Layer::kUser) {
    return props.contains(schema::kAlignment) ? Observed::kAll : Observed::kNone;
  }
  auto it = props.find(std::string(kPrefix) + std::string(layer_key(layer)));
  if (it == props.end()) return Observed::kNone;  // the layer was not recorded
  std::string_view hooks = it->second;
  if (hooks.ends_with("(none)") || hooks.ends_with("(off)")) return Observed::kNone;
  switch (layer) {
    case Layer::kFs:
      return fs_observed(hooks, op);
    case Layer::kPageCache:
      return pagecache_observed(hooks, op);
    default:
      return Observed::kAll;
  }
}

LayerObservation layer_observation(const Definitions& defs, Layer layer, bool events_seen) {
  const auto& props = defs.node_string_properties;
  bool unknown = false, any = false;
  for (Op op : kAllOps) {
    Observed v = observed(defs, layer, op);
    unknown |= v == Observed::kUnknown;
    any |= v == Observed::kAll || v == Observed::kPartial;
  }
  LayerObservation o;
  o.observed = events_seen || (!unknown && any);
  if (is_user_level(layer)) {
    if (o.observed) o.probe = "EZTrace";
    return o;
  }
  auto it = props.find(std::string(kPrefix) + std::string(layer_key(layer)));
  if (it == props.end()) return o;
  const std::string& v = it->second;
  auto open = v.rfind(" (");
  if (open != std::string::npos && v.ends_with(")")) {
    o.probe = v.substr(0, open);
    o.accuracy = v.substr(open + 2, v.size() - open - 3);
  } else {
    o.probe = v;
  }
  return o;
}

}  // namespace ezio::analysis
