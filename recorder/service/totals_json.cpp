// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/totals_json.h"

#include "common/error.h"

namespace ezio::recorder::service {
namespace {

nlohmann::json unattributed_json(const std::map<uint32_t, UnattributedIo>& table) {
  nlohmann::json un = nlohmann::json::array();
  for (const auto& [dev, u] : table) {
    un.push_back(u.device_read ? nlohmann::json{dev, u.requests, u.bytes, u.not_issued, u.device,
                                                u.device_bytes}
                               : nlohmann::json{dev, u.requests, u.bytes, u.not_issued});
  }
  return un;
}

std::map<uint32_t, UnattributedIo> unattributed_from_json(const nlohmann::json& j) {
  std::map<uint32_t, UnattributedIo> table;
  for (const auto& u : j) {
    UnattributedIo& io = table[u.at(0).get<uint32_t>()];
    io = {u.at(1).get<uint64_t>(), u.at(2).get<uint64_t>(), u.at(3).get<uint64_t>()};
    // The device's own count: an eziotraced older than it sends 4 values.
    if (u.size() > 4) {
      io.device = u.at(4).get<uint64_t>();
      io.device_read = true;
    }
    // Its bytes: an eziotraced of session 35 sends the count alone.
    if (u.size() > 5) {
      io.device_bytes = u.at(5).get<uint64_t>();
    }
  }
  return table;
}

}  // namespace

nlohmann::json totals_to_json(const Totals& t) {
  const UnattributedWindow& w = t.devices.window;
  nlohmann::json rec = nlohmann::json::array();
  for (const auto& [tid, r] : t.reclaimed) rec.push_back({tid, r.pid, r.pages});
  return {{"lost", t.lost},
          {"used", t.devices.used},
          {"unattributed", unattributed_json(t.devices.unattributed)},
          {"window", {w.table, unattributed_json(w.start), unattributed_json(w.end)}},
          {"reclaimed", rec},
          {"lost_per_cpu", t.lost_per_cpu}};
}

Totals totals_from_json(const nlohmann::json& j) {
  Totals t;
  try {
    auto lost = j.at("lost").get<std::vector<uint64_t>>();
    if (lost.size() != t.lost.size())
      fail("{} layers of losses, not {}", lost.size(), t.lost.size());
    std::copy(lost.begin(), lost.end(), t.lost.begin());
    for (uint32_t dev : j.at("used")) t.devices.used.insert(dev);
    t.devices.unattributed = unattributed_from_json(j.at("unattributed"));
    // An eziotraced older than the window sends none: the part keeps its counts only.
    if (auto w = j.find("window"); w != j.end()) {
      t.devices.window = {w->at(0).get<uint64_t>(), unattributed_from_json(w->at(1)),
                          unattributed_from_json(w->at(2))};
    }
    for (const auto& r : j.at("reclaimed")) {
      ezio_reclaimed v{};
      v.pid = r.at(1).get<uint32_t>();
      v.pages = r.at(2).get<uint64_t>();
      t.reclaimed[r.at(0).get<uint32_t>()] = v;
    }
    t.lost_per_cpu = j.at("lost_per_cpu").get<std::vector<uint64_t>>();
  } catch (const nlohmann::json::exception& e) {
    fail("eziotraced's totals are unreadable: {}", e.what());
  }
  return t;
}

}  // namespace ezio::recorder::service
