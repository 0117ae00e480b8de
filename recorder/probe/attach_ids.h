// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The attach points of the BTF-attached programs (tp_btf/, fentry/, fexit/), as ids in the kernel's
// BTF, given to libbpf instead of letting it find them: to find them libbpf parses the kernel's
// whole BTF (/sys/kernel/btf/vmlinux) and scans it once per program, at every load
// (docs/costs.md). They are found once per kernel (KernelProber) and kept in the probe cache
// (recorder/probe/kernel_cache.h), whose key changes with the kernel and its modules' BTF.
//
// How: libbpf section handlers of our own for tp_btf/, fentry/ and fexit/ (registered before the
// skeleton is opened, for the process's life) put the ids into each program's load attributes,
// and attach as libbpf's own do (bpf_program__attach_trace). libbpf parses the kernel's BTF for a
// tracing program unless it has an attach_prog_fd (a BPF program to attach to): while the
// programs load they get a placeholder one, which the handler removes from the load attributes,
// so the kernel never sees it. The programs, their attach points and what they record are the same
// as with libbpf's own lookup.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/unique_fd.h"

struct bpf_object;
struct bpf_program;

namespace ezio::recorder {

struct AttachId {
  uint32_t btf_id = 0;
  std::string module;  // whose BTF has it; "" for vmlinux
};
// By section name, e.g. "tp_btf/sys_exit".
using AttachIds = std::map<std::string, AttachId>;

// The sections of the programs selected to load that attach by BTF (of the recorder's object or
// the metrics').
std::vector<std::string> btf_attach_sections(const bpf_object* obj);

// Finds the attach points in the kernel's BTF (parsing it). Fails on one it lacks.
AttachIds find_attach_ids(const std::vector<std::string>& sections);

nlohmann::json attach_ids_to_json(const AttachIds& ids);
// Nothing from a malformed document.
AttachIds attach_ids_from_json(const nlohmann::json& j);

// Once per process, before the skeleton is opened: the section handlers above.
void register_attach_handlers();

// While it lives, the selected BTF-attached programs of obj load with their ids in ids (each
// must be there), the modules' BTF named by them held open.
class AttachIdsInUse {
 public:
  AttachIdsInUse(bpf_object* obj, const AttachIds& ids);
  ~AttachIdsInUse();
  AttachIdsInUse(const AttachIdsInUse&) = delete;
  AttachIdsInUse& operator=(const AttachIdsInUse&) = delete;

 private:
  std::vector<const bpf_program*> progs_;
  std::map<std::string, UniqueFd> modules_;
};

}  // namespace ezio::recorder
