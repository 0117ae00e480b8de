// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/probe/probe_plan_json.h"

namespace ezio::recorder {
namespace {

// Bumped whenever ProbePlan changes meaning, so that a plan written by another version is ignored.
constexpr int kFormat = 3;  // 3: the syscall layer's programs are named in programs

using nlohmann::json;

VfsHook vfs_hook_from(const std::string& name) {
  for (VfsHook h : {VfsHook::off, VfsHook::fentry, VfsHook::kprobe, VfsHook::derived}) {
    if (name == vfs_hook_name(h)) return h;
  }
  throw json::other_error::create(501, "unknown VFS hook " + name, nullptr);
}

}  // namespace

json plan_to_json(const ProbePlan& plan) {
  json layers = json::array();
  for (const auto& l : plan.layers) {
    layers.push_back({{"on", l.on}, {"hook", l.hook}, {"accuracy", l.accuracy}});
  }
  json trials = json::array();
  for (const auto& [layer, t] : plan.trials) {
    trials.push_back({{"layer", layer}, {"hook", t.hook}, {"ok", t.ok}, {"why", t.why}});
  }
  return {{"format", kFormat},
          {"layers", layers},
          {"vfs_hook", vfs_hook_name(plan.vfs_hook)},
          {"programs", plan.programs},
          {"trials", trials},
          {"tracepoints", plan.tracepoints},
          {"dirty_throttle_args", plan.dirty_throttle_args}};
}

std::optional<ProbePlan> plan_from_json(const json& j) {
  try {
    if (j.at("format").get<int>() != kFormat) return std::nullopt;
    ProbePlan plan;
    const json& layers = j.at("layers");
    if (layers.size() != plan.layers.size()) return std::nullopt;
    for (size_t l = 0; l < plan.layers.size(); ++l) {
      plan.layers[l].on = layers[l].at("on").get<bool>();
      plan.layers[l].hook = layers[l].at("hook").get<std::string>();
      plan.layers[l].accuracy = layers[l].at("accuracy").get<std::string>();
    }
    plan.vfs_hook = vfs_hook_from(j.at("vfs_hook").get<std::string>());
    plan.vfs_derived = plan.vfs_hook == VfsHook::derived;
    plan.programs = j.at("programs").get<std::set<std::string>>();
    for (const json& t : j.at("trials")) {
      plan.trials.push_back({t.at("layer").get<unsigned>(),
                             {t.at("hook").get<std::string>(), t.at("ok").get<bool>(),
                              t.at("why").get<std::string>()}});
    }
    plan.tracepoints = j.at("tracepoints").get<std::map<std::string, bool>>();
    plan.dirty_throttle_args = j.at("dirty_throttle_args").get<int>();
    return plan;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace ezio::recorder
