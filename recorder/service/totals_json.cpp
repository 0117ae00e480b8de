// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/totals_json.h"

#include "common/error.h"

namespace ezio::recorder::service {

nlohmann::json totals_to_json(const Totals& t) {
  nlohmann::json un = nlohmann::json::array();
  for (const auto& [dev, u] : t.devices.unattributed)
    un.push_back({dev, u.requests, u.bytes, u.not_issued});
  nlohmann::json rec = nlohmann::json::array();
  for (const auto& [tid, r] : t.reclaimed) rec.push_back({tid, r.pid, r.pages});
  return {{"lost", t.lost},
          {"used", t.devices.used},
          {"unattributed", un},
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
    for (const auto& u : j.at("unattributed")) {
      t.devices.unattributed[u.at(0).get<uint32_t>()] = {
          u.at(1).get<uint64_t>(), u.at(2).get<uint64_t>(), u.at(3).get<uint64_t>()};
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
