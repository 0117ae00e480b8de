// SPDX-License-Identifier: GPL-2.0-only
#include "split_hosts.h"

#include <map>

#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "converters/merge/definition_mapper.h"

namespace ezio::test {
namespace {

using otf2::Ref;

class PartCopy : public otf2::EventVisitor {
 public:
  PartCopy(otf2::ArchiveWriter& w, converters::DefinitionMapper& map) : w_(w), map_(map) {}
  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    if (!writer_) writer_ = w_.events(loc);
    map_.write(writer_, e, e.time);
  }
  void end_location(OTF2_LocationRef loc) override {
    if (writer_) w_.finish_events(loc);
    writer_ = nullptr;
  }

 private:
  otf2::ArchiveWriter& w_;
  converters::DefinitionMapper& map_;
  OTF2_EvtWriter* writer_ = nullptr;
};

void write_part(const std::filesystem::path& anchor, const std::string& host,
                const std::function<bool(Ref group)>& mine, const std::filesystem::path& dir,
                const std::map<std::string, std::string>& properties,
                const std::map<std::string, uint64_t>& device_properties) {
  otf2::ArchiveReader reader(anchor);
  const otf2::Definitions& d = reader.defs();
  otf2::ArchiveWriter w(dir);
  const Ref node = w.system_tree_node(host, "machine");
  for (const auto& p : d.node_properties) {
    OTF2_AttributeValue v = p.value;
    if (p.type == OTF2_TYPE_STRING) v.stringRef = w.string(d.str(v.stringRef));
    w.system_tree_node_property(node, d.str(p.name), p.type, v);
  }
  for (const auto& [name, value] : properties) {
    w.system_tree_node_property(node, name, std::string_view(value));
  }
  converters::CommMapper comms(w);
  comms.add_archive(d);
  comms.define_locations([](const otf2::Definitions&, uint64_t loc) { return loc; });
  converters::SharedDefinitions shared{w, node, comms, {}, {}, {}};
  converters::DefinitionMapper map(d, shared);
  std::map<Ref, Ref> groups;
  for (const auto& [id, g] : d.location_groups) {
    if (!mine(id)) continue;
    groups[id] = w.location_group(d.str(g.name), g.type, node);
    for (const auto& p : d.group_properties) {
      if (p.owner == id && p.type == OTF2_TYPE_UINT64) {
        w.location_group_property(groups[id], d.str(p.name), p.value.uint64);
      }
    }
  }
  for (const auto& [id, l] : d.locations) {
    if (!groups.count(l.group)) continue;
    w.location(id, d.str(l.name), l.type, groups[l.group]);
    if (!d.str(l.name).starts_with("block ")) continue;
    for (const auto& [name, value] : device_properties) w.location_property(id, name, value);
  }
  PartCopy copy(w, map);
  otf2::ReadOptions options;
  options.select = [&](OTF2_LocationRef loc) {
    auto l = d.locations.find(loc);
    return l != d.locations.end() && groups.count(l->second.group) > 0;
  };
  reader.read_events(copy, options);
  w.clock({d.resolution, d.global_offset, d.trace_length, d.realtime});
  w.close();
}

}  // namespace

std::vector<std::filesystem::path> split_hosts(
    const std::filesystem::path& anchor, const std::vector<std::string>& hosts,
    const std::function<size_t(const std::string& group)>& host_of,
    const std::filesystem::path& out, const std::map<std::string, std::string>& properties,
    const std::map<std::string, uint64_t>& device_properties) {
  otf2::ArchiveReader reader(anchor);
  const otf2::Definitions& d = reader.defs();
  std::vector<std::filesystem::path> dirs;
  for (size_t i = 0; i < hosts.size(); ++i) {
    dirs.push_back(out / hosts[i]);
    std::filesystem::create_directories(dirs.back());
    write_part(
        anchor, hosts[i],
        [&](Ref group) {
          auto g = d.location_groups.find(group);
          size_t h = g == d.location_groups.end() ? 0 : host_of(d.str(g->second.name));
          return h == i;
        },
        dirs.back(), properties, device_properties);
  }
  return dirs;
}

}  // namespace ezio::test
