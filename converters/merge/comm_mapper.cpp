// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/comm_mapper.h"

#include <algorithm>
#include <climits>
#include <functional>

#include "common/error.h"

namespace ezio::converters {
namespace {

size_t first_with_id(const auto& defs, Ref id) {
  for (size_t i = 0; i < defs.size(); ++i) {
    if (defs[i].id == id) return i;
  }
  return SIZE_MAX;
}

constexpr std::string_view kStandInPrefix = "EZTrace location ";
constexpr std::string_view kStandInSuffix = " (no alignment data)";

}  // namespace

std::string stand_in_group_name(uint64_t eztrace_location) {
  return std::string(kStandInPrefix) + std::to_string(eztrace_location) +
         std::string(kStandInSuffix);
}

bool is_stand_in_group(const std::string& name) {
  return name.starts_with(kStandInPrefix) && name.ends_with(kStandInSuffix);
}

CommMapper::Input& CommMapper::input(const Definitions& defs) {
  auto it = inputs_.find(&defs);
  if (it == inputs_.end() || !located_) {
    fail("internal error: communicators mapped before their archive's ranks were defined");
  }
  return it->second;
}

void CommMapper::add_archive(const Definitions& defs, const std::set<uint64_t>& elsewhere) {
  auto [it, inserted] = inputs_.try_emplace(&defs);
  if (!inserted) return;
  order_.push_back(&defs);
  Input& in = it->second;
  for (const GroupDef& g : defs.groups) {
    // The first COMM_LOCATIONS group of a paradigm; EZTrace defines no second one, and a second
    // one would make the ranks ambiguous anyway.
    if (g.type != OTF2_GROUP_TYPE_COMM_LOCATIONS || in.locations.count(g.paradigm)) continue;
    Locations& all = locations_[g.paradigm];
    if (all.parts.empty()) all.name = defs.str(g.name);
    in.locations[g.paradigm] = g.members;
    std::vector<bool> held;
    for (uint64_t m : g.members) held.push_back(!elsewhere.count(m));
    all.parts.push_back({&defs, g.members, std::move(held)});
  }
}

bool CommMapper::one_job(const Locations& all) {
  if (all.parts.size() < 2) return false;
  const size_t ranks = all.parts.front().members.size();
  std::vector<int> holders(ranks, 0);
  for (const auto& part : all.parts) {
    if (part.members.size() != ranks) return false;
    for (size_t i = 0; i < ranks; ++i) holders[i] += part.held[i];
  }
  // Two inputs holding one rank are two jobs (or processes of no job: EZTrace's bogus
  // MPI_COMM_WORLD of one member per process), concatenated as before.
  return std::all_of(holders.begin(), holders.end(), [](int n) { return n <= 1; });
}

CommMapper::GroupKey CommMapper::group_key(const Definitions& defs, const Input& in,
                                           size_t index) const {
  if (index >= defs.groups.size()) {
    // A comm without its group: OTF2 wants one, so it gets an empty self group.
    return {"", OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, {}};
  }
  const GroupDef& g = defs.groups[index];
  OTF2_GroupType type = g.type;
  std::vector<uint64_t> members = g.members;
  uint64_t base = in.rank_base.count(g.paradigm) ? in.rank_base.at(g.paradigm) : 0;
  if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
    // Referred to as a communicator's group: all its ranks.
    type = OTF2_GROUP_TYPE_COMM_GROUP;
    for (size_t i = 0; i < members.size(); ++i) members[i] = base + i;
  } else if (type == OTF2_GROUP_TYPE_COMM_GROUP) {
    for (uint64_t& m : members) m += base;
  }
  return {defs.str(g.name), type, g.paradigm, g.flags, std::move(members)};
}

otf2::Ref CommMapper::group_at(const Definitions& defs, size_t index) {
  Input& in = input(defs);
  if (auto it = in.groups.find(index); it != in.groups.end()) return it->second;
  GroupKey key = group_key(defs, in, index);
  auto found = group_ids_.find(key);
  if (found == group_ids_.end()) {
    const auto& [name, type, paradigm, flags, members] = key;
    otf2::Ref r =
        w_.group(name, static_cast<OTF2_GroupType>(type), static_cast<OTF2_Paradigm>(paradigm),
                 static_cast<OTF2_GroupFlag>(flags), members);
    found = group_ids_.emplace(key, r).first;
  }
  return in.groups[index] = found->second;
}

otf2::Ref CommMapper::comm_at(const Definitions& defs, size_t index) {
  if (index >= defs.comms.size()) return OTF2_UNDEFINED_COMM;
  Input& in = input(defs);
  if (auto it = in.comms.find(index); it != in.comms.end()) return it->second;
  if (index < in.identity.size() && !in.identity[index].empty()) {
    // One job's communicator: the first part's definition of it, for every part.
    const auto [first, at] = first_.at(in.identity[index]);
    if (first != &defs || at != index) return in.comms[index] = comm_at(*first, at);
  }
  const CommDef& c = defs.comms[index];
  in.visiting.insert(index);
  otf2::Ref group = group_at(defs, c.group_index);
  otf2::Ref parent = OTF2_UNDEFINED_COMM;
  if (c.parent != OTF2_UNDEFINED_COMM && c.parent != c.id) {
    size_t p = first_with_id(defs.comms, c.parent);
    if (p != SIZE_MAX && !in.visiting.count(p)) parent = comm_at(defs, p);
  }
  in.visiting.erase(index);
  auto key = std::make_tuple(defs.str(c.name), group, parent);
  auto found = comm_ids_.find(key);
  if (found == comm_ids_.end()) {
    found = comm_ids_.emplace(key, w_.comm(std::get<0>(key), group, parent)).first;
  }
  return in.comms[index] = found->second;
}

otf2::Ref CommMapper::comm(const Definitions& defs, Ref id) {
  if (id == OTF2_UNDEFINED_COMM) return OTF2_UNDEFINED_COMM;
  return comm_at(defs, first_with_id(defs.comms, id));
}

otf2::Ref CommMapper::group(const Definitions& defs, Ref id) {
  if (id == OTF2_UNDEFINED_GROUP) return OTF2_UNDEFINED_GROUP;
  size_t index = first_with_id(defs.groups, id);
  return index == SIZE_MAX ? OTF2_UNDEFINED_GROUP : group_at(defs, index);
}

void CommMapper::define_locations(
    const std::function<OTF2_LocationRef(const Definitions&, uint64_t)>& location) {
  if (located_) return;
  located_ = true;
  for (const auto& [paradigm, all] : locations_) {
    std::vector<uint64_t> members;
    if (one_job(all)) {
      one_job_.insert(paradigm);
      // Rank i is the location of the input holding it; a rank no input holds (its host's part
      // is missing) keeps the first input's stand-in, so that the ranks stay in place.
      for (size_t i = 0; i < all.parts.front().members.size(); ++i) {
        const Locations::Part* from = &all.parts.front();
        for (const auto& part : all.parts) {
          if (part.held[i]) from = &part;
        }
        members.push_back(location(*from->defs, from->members[i]));
      }
      for (const auto& part : all.parts) inputs_.at(part.defs).rank_base[paradigm] = 0;
    } else {
      for (const auto& part : all.parts) {
        inputs_.at(part.defs).rank_base[paradigm] = members.size();
        for (uint64_t m : part.members) members.push_back(location(*part.defs, m));
      }
    }
    const uint64_t size = members.size();
    located_ids_[paradigm] = {w_.group(all.name, OTF2_GROUP_TYPE_COMM_LOCATIONS, paradigm,
                                       OTF2_GROUP_FLAG_NONE, std::move(members)),
                              size};
    ++locations_written_;
  }
  identify_job_comms();
}

void CommMapper::identify_job_comms() {
  if (one_job_.empty()) return;
  for (const Definitions* defs : order_) {
    Input& in = inputs_.at(defs);
    const auto& comms = defs->comms;
    // What a comm is within its part: its group's type, paradigm and ranks; and its parent.
    std::vector<std::vector<uint64_t>> local(comms.size());
    std::vector<size_t> parent(comms.size(), SIZE_MAX);
    for (size_t i = 0; i < comms.size(); ++i) {
      const CommDef& c = comms[i];
      if (c.group_index >= defs->groups.size() ||
          !one_job_.count(defs->groups[c.group_index].paradigm)) {
        continue;
      }
      const auto [name, type, paradigm, flags, members] = group_key(*defs, in, c.group_index);
      local[i] = {uint64_t(type), uint64_t(paradigm), members.size()};
      local[i].insert(local[i].end(), members.begin(), members.end());
      if (c.parent != OTF2_UNDEFINED_COMM && c.parent != c.id) {
        parent[i] = first_with_id(comms, c.parent);
      }
    }
    in.identity.assign(comms.size(), {});
    std::vector<int> state(comms.size(), 0);  // 1: being identified (a parent cycle), 2: done
    std::function<void(size_t)> identify = [&](size_t i) {
      if (state[i]) return;
      state[i] = 1;
      if (!local[i].empty()) {
        // Its place among the part's comms alike (ids grow in the order a rank creates them).
        uint64_t ordinal = 0;
        for (size_t j = 0; j < comms.size(); ++j) {
          ordinal += local[j] == local[i] && parent[j] == parent[i] &&
                     std::pair(comms[j].id, j) < std::pair(comms[i].id, i);
        }
        std::vector<uint64_t> id = local[i];
        id.push_back(ordinal);
        const size_t p = parent[i];
        if (p != SIZE_MAX && state[p] != 1) identify(p);
        const std::vector<uint64_t> none;
        const auto& of_parent = p != SIZE_MAX && state[p] == 2 ? in.identity[p] : none;
        id.push_back(of_parent.size());
        id.insert(id.end(), of_parent.begin(), of_parent.end());
        first_.try_emplace(id, defs, i);
        in.identity[i] = std::move(id);
      }
      state[i] = 2;
    };
    for (size_t i = 0; i < comms.size(); ++i) identify(i);
  }
}

}  // namespace ezio::converters
