// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/program_figures.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/log.h"
#include "hooks.h"
#include "recorder/core/skeleton.h"

namespace ezio::recorder {
namespace {

// The syscall layer's programs by role, for the figures below: the tracepoints, or per syscall an
// fentry and an fexit program, each tail-calling its shared body or holding it whole
// (bpf/syscall_functions.bpf.h).
std::string_view syscall_program_role(std::string_view name) {
  if (name == EZIO_HOOK_STR(EZIO_SC_ENTRY_BODY)) return "shared entry body";
  if (name == EZIO_HOOK_STR(EZIO_SC_EXIT_BODY)) return "shared exit body";
  if (name.starts_with("ezio_sys_")) return "tracepoints";
  if (!name.starts_with("ezio_sc_")) return {};
  if (name.ends_with("_entry")) return "entries by tail call";
  if (name.ends_with("_entry_whole")) return "entries with the whole body";
  if (name.ends_with("_exit_whole")) return "exits with the whole body";
  return "exits by tail call";
}

// What the verifier went through (`record -v`): the instructions of all the loaded programs and of
// the syscall layer's by role, whose hook mode decides most of the load's time (docs/costs.md, "The
// syscall layer's hook mode").
}  // namespace

void log_verified_instructions(const HalfLoaders& loaders) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  uint64_t all = 0;
  unsigned programs = 0;
  std::map<std::string_view, std::pair<unsigned, uint64_t>> syscall;  // programs, instructions
  for (const auto& loader : loaders) {
    bpf_program* prog;
    bpf_object__for_each_program(prog, loader->skeleton()->obj) {
      int fd = bpf_program__fd(prog);
      if (fd < 0) continue;
      bpf_prog_info info = {};
      uint32_t len = sizeof(info);
      if (bpf_obj_get_info_by_fd(fd, &info, &len)) continue;
      all += info.verified_insns;
      ++programs;
      if (auto role = syscall_program_role(bpf_program__name(prog)); !role.empty()) {
        ++syscall[role].first;
        syscall[role].second += info.verified_insns;
      }
    }
  }
  std::vector<std::string> roles;
  for (const auto& [role, n] : syscall)
    roles.push_back(fmt::format("{} {}: {}", n.first, role, n.second));
  spdlog::debug(
      "the verifier went through {} instructions for {} programs; the syscall layer's: {}", all,
      programs, fmt::join(roles, ", "));
}

}  // namespace ezio::recorder
