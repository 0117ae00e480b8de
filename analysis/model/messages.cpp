// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/messages.h"

#include <algorithm>

namespace ezio::analysis {
namespace {

using otf2::EventKind;

// The COMM_LOCATIONS group of a paradigm: the locations a COMM_GROUP's members index.
const otf2::GroupDef* locations_group(const otf2::Definitions& d, OTF2_Paradigm paradigm) {
  for (const auto& g : d.groups) {
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == paradigm) return &g;
  }
  return nullptr;
}

}  // namespace

std::string location_host(const otf2::Definitions& defs, OTF2_LocationRef loc) {
  auto l = defs.locations.find(loc);
  if (l == defs.locations.end()) return {};
  auto g = defs.location_groups.find(l->second.group);
  if (g == defs.location_groups.end()) return {};
  auto n = defs.nodes.find(g->second.node);
  return n == defs.nodes.end() ? std::string() : defs.str(n->second.name);
}

uint64_t MessageSummary::messages() const {
  uint64_t n = 0;
  for (const auto& p : pairs) n += p.messages;
  return n;
}

uint64_t MessageSummary::violations() const {
  uint64_t n = 0;
  for (const auto& p : pairs) n += p.received_before;
  return n;
}

MessageCheck::MessageCheck(const otf2::Definitions& defs) : defs_(defs) {}

const MessageCheck::Comm* MessageCheck::comm(otf2::Ref id) {
  if (auto it = comms_.find(id); it != comms_.end()) return &it->second;
  // An event's comm is the first definition of its id (EZTrace defines ids twice, the first
  // one is the communicator its events mean: converters/merge/comm_mapper.h).
  auto def = std::find_if(defs_.comms.begin(), defs_.comms.end(),
                          [id](const otf2::CommDef& c) { return c.id == id; });
  Comm& c = comms_[id];
  if (def == defs_.comms.end() || def->group_index >= defs_.groups.size()) return &c;
  c.name = defs_.str(def->name);
  const otf2::GroupDef& g = defs_.groups[def->group_index];
  if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
    c.members = g.members;
  } else if (const otf2::GroupDef* all = locations_group(defs_, g.paradigm)) {
    for (uint64_t rank : g.members) {
      c.members.push_back(rank < all->members.size() ? all->members[rank] : UINT64_MAX);
    }
  }
  return &c;
}

uint32_t MessageCheck::host_index(OTF2_LocationRef loc) {
  const std::string host = location_host(defs_, loc);
  auto it = std::find(hosts_.begin(), hosts_.end(), host);
  if (it != hosts_.end()) return uint32_t(it - hosts_.begin());
  hosts_.push_back(host);
  return uint32_t(hosts_.size() - 1);
}

void MessageCheck::begin_location(OTF2_LocationRef loc) {
  open_.clear();
  pending_.clear();
  host_ = host_index(loc);
}

void MessageCheck::end_location(OTF2_LocationRef) {
  open_.clear();
  pending_.clear();  // receives in calls never left keep their event's time
}

void MessageCheck::event(OTF2_LocationRef loc, const otf2::Event& e) {
  switch (e.kind) {
    case EventKind::Enter:
      open_.push_back(e.time);
      break;
    case EventKind::Leave:
      while (!pending_.empty() && pending_.back().depth >= open_.size()) {
        pending_.back().queue->receives[pending_.back().index].time = e.time;
        pending_.pop_back();
      }
      if (!open_.empty()) open_.pop_back();
      break;
    case EventKind::MpiSend:
    case EventKind::MpiIsend:
      message(loc, e, true);
      break;
    case EventKind::MpiRecv:
    case EventKind::MpiIrecv:
      message(loc, e, false);
      break;
    default:
      break;
  }
}

void MessageCheck::message(OTF2_LocationRef loc, const otf2::Event& e, bool send) {
  const Comm* c = comm(e.ref);
  auto self = std::find(c->members.begin(), c->members.end(), uint64_t(loc));
  if (self == c->members.end()) {
    ++unresolved_;
    return;
  }
  const uint64_t rank = uint64_t(self - c->members.begin()), peer = e.f1;
  Queue& q = queues_[Key{c->name, c->members.size(), send ? rank : peer, send ? peer : rank, e.f2}];
  if (send) {
    q.sends.push_back({open_.empty() ? e.time : open_.back(), host_});
    return;
  }
  q.receives.push_back({e.time, host_});
  if (!open_.empty()) pending_.push_back({open_.size(), &q, q.receives.size() - 1});
}

MessageSummary MessageCheck::finish() {
  MessageSummary s;
  s.unresolved = unresolved_;
  std::map<std::pair<uint32_t, uint32_t>, MessagePair> pairs;
  auto by_time = [](const End& a, const End& b) { return a.time < b.time; };
  for (auto& [key, q] : queues_) {
    std::stable_sort(q.sends.begin(), q.sends.end(), by_time);
    std::stable_sort(q.receives.begin(), q.receives.end(), by_time);
    const size_t n = std::min(q.sends.size(), q.receives.size());
    s.unmatched_sends += q.sends.size() - n;
    s.unmatched_receives += q.receives.size() - n;
    for (size_t i = 0; i < n; ++i) {
      const End &send = q.sends[i], &receive = q.receives[i];
      MessagePair& p = pairs[{send.host, receive.host}];
      ++p.messages;
      if (receive.time < send.time) {
        ++p.received_before;
        p.worst_ns = std::max(p.worst_ns, send.time - receive.time);
      }
    }
  }
  for (auto& [hosts, p] : pairs) {
    p.sender_host = hosts_[hosts.first];
    p.receiver_host = hosts_[hosts.second];
    s.pairs.push_back(std::move(p));
  }
  std::sort(s.pairs.begin(), s.pairs.end(), [](const MessagePair& a, const MessagePair& b) {
    return std::tie(a.sender_host, a.receiver_host) < std::tie(b.sender_host, b.receiver_host);
  });
  return s;
}

}  // namespace ezio::analysis
