// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/slurm_jobs.h"

#include <regex>

namespace ezio::recorder::service {

std::optional<std::string> slurm_job_of_dir(const std::string& name) {
  static const std::regex job("job_([0-9]+)");
  std::smatch m;
  if (!std::regex_match(name, m, job)) return std::nullopt;
  return m[1].str();
}

std::optional<uid_t> scontrol_user_id(const std::string& output) {
  // UserId=alice(1001); a user unknown to the node's passwd is shown as UserId=(1001) or
  // UserId=1001(1001).
  static const std::regex user(R"((^|\s)UserId=[^\s(]*\(([0-9]+)\))");
  std::smatch m;
  if (!std::regex_search(output, m, user)) return std::nullopt;
  return uid_t(std::stoul(m[2].str()));
}

namespace {

// Takes out of names those not present, each handed to gone (when there is one): how many.
uint64_t take_gone(std::set<std::string>& names, const std::set<std::string>& present,
                   const std::function<void(const std::string&)>& gone) {
  uint64_t n = 0;
  for (auto it = names.begin(); it != names.end();) {
    if (present.count(*it)) {
      ++it;
      continue;
    }
    if (gone) gone(*it);
    ++n;
    it = names.erase(it);
  }
  return n;
}

}  // namespace

void SlurmJobSet::reconcile(const std::set<std::string>& present, const Actions& act) {
  removed_ += take_gone(recorded_, present, act.remove);
  gone_pending_ += take_gone(pending_, present, act.cancel);
  std::erase_if(refused_, [&](const auto& r) { return !present.count(r.first); });
  for (const std::string& name : present) {
    if (recorded_.count(name) || pending_.count(name) || refused_.count(name)) continue;
    if (std::string why = act.add(name); why.empty()) {
      pending_.insert(name);
    } else {
      refuse(name, why);
    }
  }
}

void SlurmJobSet::refuse(const std::string& name, const std::string& why) {
  refused_[name] = why;
  ++refused_total_;
}

void SlurmJobSet::settle(const std::string& name, const std::string& why) {
  if (!pending_.erase(name)) return;
  if (!why.empty()) return refuse(name, why);
  recorded_.insert(name);
  ++added_;
}

nlohmann::json SlurmJobSet::status() const {
  nlohmann::json refused_now = nlohmann::json::array();
  for (const auto& [name, why] : refused_) refused_now.push_back(name);
  return {{"recorded", recorded_.size()}, {"added", added_},
          {"removed", removed_},          {"refused", refused_total_},
          {"refused_now", refused_now},   {"refused_why", refused_},
          {"pending", pending_.size()},   {"pending_now", pending_},
          {"gone_pending", gone_pending_}};
}

}  // namespace ezio::recorder::service
