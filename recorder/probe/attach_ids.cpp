// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/probe/attach_ids.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "common/error.h"
#include "recorder/core/skeleton.h"
#include "recorder/probe/probe_kernel.h"

namespace ezio::recorder {
namespace {

// Any positive number: libbpf stores it without looking at it, the handler removes it.
constexpr int kPlaceholderProgFd = 1;

struct Target {
  uint32_t btf_id;
  int btf_obj_fd;  // 0: vmlinux
};

// The programs loading now, for the handler (libbpf calls it with the program only).
std::mutex registry_mutex;
std::unordered_map<const bpf_program*, Target> registry;

int prepare_load(bpf_program* prog, bpf_prog_load_opts* opts, long /*cookie*/) {
  std::lock_guard lock(registry_mutex);
  auto it = registry.find(prog);
  if (it == registry.end()) return -ENOENT;  // libbpf reports the program that failed
  opts->attach_prog_fd = 0;
  opts->attach_btf_id = it->second.btf_id;
  opts->attach_btf_obj_fd = it->second.btf_obj_fd;
  return 0;
}

int attach(const bpf_program* prog, long /*cookie*/, bpf_link** link) {
  *link = bpf_program__attach_trace(prog);
  return *link ? 0 : -errno;
}

bool attached_by_btf(const bpf_program* prog) {
  if (!bpf_program__autoload(prog) || bpf_program__type(prog) != BPF_PROG_TYPE_TRACING) {
    return false;
  }
  switch (bpf_program__expected_attach_type(prog)) {
    case BPF_TRACE_RAW_TP:
    case BPF_TRACE_FENTRY:
    case BPF_TRACE_FEXIT:
      return std::strchr(bpf_program__section_name(prog), '/') != nullptr;
    default:
      return false;
  }
}

// The BTF type libbpf would look for: btf_trace_<tracepoint> (a typedef) or the function.
std::pair<std::string, uint32_t> btf_name_of(std::string_view section) {
  std::string_view target = section.substr(section.find('/') + 1);
  if (section.starts_with("tp_btf/")) return {"btf_trace_" + std::string(target), BTF_KIND_TYPEDEF};
  return {std::string(target), BTF_KIND_FUNC};
}

// The modules' BTF objects named in wanted, by name.
std::map<std::string, UniqueFd> open_module_btfs(const std::set<std::string>& wanted) {
  std::map<std::string, UniqueFd> found;
  uint32_t id = 0;
  while (found.size() < wanted.size() && bpf_btf_get_next_id(id, &id) == 0) {
    UniqueFd fd(bpf_btf_get_fd_by_id(id));
    if (!fd) continue;
    if (std::optional<std::string> name = kernel_btf_name(fd.get()); name && wanted.count(*name)) {
      found.emplace(*name, std::move(fd));
    }
  }
  for (const auto& m : wanted) {
    if (!found.count(m)) fail("no BTF of module {} in the kernel (unloaded?)", m);
  }
  return found;
}

}  // namespace

std::vector<std::string> btf_attach_sections(const bpf_object* obj) {
  std::vector<std::string> sections;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    if (attached_by_btf(prog)) sections.push_back(bpf_program__section_name(prog));
  }
  return sections;
}

AttachIds find_attach_ids(const std::vector<std::string>& sections) {
  KernelProber kernel;
  AttachIds ids;
  for (const auto& section : sections) {
    auto [name, kind] = btf_name_of(section);
    auto where = kernel.locate(name, kind);
    if (!where) fail("the kernel's BTF has no {} (for BPF program section {})", name, section);
    ids[section] = {where->first, where->second};
  }
  return ids;
}

nlohmann::json attach_ids_to_json(const AttachIds& ids) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [section, id] : ids) j[section] = {{"id", id.btf_id}, {"module", id.module}};
  return j;
}

AttachIds attach_ids_from_json(const nlohmann::json& j) {
  AttachIds ids;
  if (!j.is_object()) return {};
  for (const auto& [section, v] : j.items()) {
    if (!v.is_object() || !v.contains("id") || !v["id"].is_number_unsigned() ||
        !v.contains("module") || !v["module"].is_string() || v["id"].get<uint64_t>() == 0 ||
        v["id"].get<uint64_t>() > UINT32_MAX) {
      return {};
    }
    ids[section] = {v["id"].get<uint32_t>(), v["module"].get<std::string>()};
  }
  return ids;
}

void register_attach_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    LIBBPF_OPTS(libbpf_prog_handler_opts, opts, .prog_prepare_load_fn = prepare_load,
                .prog_attach_fn = attach);
    const std::pair<const char*, bpf_attach_type> sections[] = {
        {"tp_btf/", BPF_TRACE_RAW_TP}, {"fentry/", BPF_TRACE_FENTRY}, {"fexit/", BPF_TRACE_FEXIT}};
    for (const auto& [sec, type] : sections) {
      if (int err = libbpf_register_prog_handler(sec, BPF_PROG_TYPE_TRACING, type, &opts);
          err < 0) {
        fail("cannot register the libbpf handler of {}: {}", sec, errno_text(-err));
      }
    }
  });
}

AttachIdsInUse::AttachIdsInUse(bpf_object* obj, const AttachIds& ids) {
  std::vector<std::pair<bpf_program*, const AttachId*>> used;
  std::set<std::string> modules;  // of the programs loaded: the table may name others
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    if (!attached_by_btf(prog)) continue;
    auto it = ids.find(bpf_program__section_name(prog));
    if (it == ids.end()) fail("no attach point for BPF program {}", bpf_program__name(prog));
    used.emplace_back(prog, &it->second);
    if (!it->second.module.empty()) modules.insert(it->second.module);
  }
  modules_ = open_module_btfs(modules);
  std::vector<std::pair<bpf_program*, Target>> targets;
  for (const auto& [p, id] : used) {
    targets.emplace_back(
        p, Target{id->btf_id, id->module.empty() ? 0 : modules_.at(id->module).get()});
  }
  for (auto& [p, target] : targets) {
    if (int err = bpf_program__set_attach_target(p, kPlaceholderProgFd, nullptr)) {
      fail("cannot set the attach point of BPF program {}: {}", bpf_program__name(p),
           errno_text(-err));
    }
  }
  std::lock_guard lock(registry_mutex);
  for (auto& [p, target] : targets) {
    registry[p] = target;
    progs_.push_back(p);
  }
}

AttachIdsInUse::~AttachIdsInUse() {
  std::lock_guard lock(registry_mutex);
  for (const bpf_program* p : progs_) registry.erase(p);
}

}  // namespace ezio::recorder
