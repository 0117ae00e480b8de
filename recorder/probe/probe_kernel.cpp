// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/probe/probe_kernel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "common/unique_fd.h"
#include "recorder/core/concurrent_close.h"

namespace ezio::recorder {
namespace {

ProbeOutcome failed(int err) { return {false, errno_text(err)}; }

constexpr const char* kDenyVariable = "EZIOTRACE_DENY_HOOKS";

// An outcome that says why the hook is not tried, or nothing when kind is allowed.
std::optional<ProbeOutcome> denial(const char* kind) {
  const auto& denied = denied_hook_kinds();
  if (std::find(denied.begin(), denied.end(), kind) == denied.end()) return std::nullopt;
  return ProbeOutcome{false, fmt::format("{} hooks denied by {}", kind, kDenyVariable)};
}

// The bit of perf_event_attr.config that makes a kprobe PMU event a kretprobe ("config:0").
int retprobe_bit() {
  std::ifstream in("/sys/bus/event_source/devices/kprobe/format/retprobe");
  std::string format;
  if (!(in >> format) || format.rfind("config:", 0) != 0) return -1;
  try {
    return std::stoi(format.substr(7));
  } catch (const std::exception&) {
    return -1;
  }
}

// r0 = 0; exit: the smallest program the verifier accepts for a hook, of the given type.
int load_minimal(bpf_prog_type type, const bpf_prog_load_opts* opts) {
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[0].dst_reg = BPF_REG_0;
  insns[1].code = BPF_JMP | BPF_EXIT;
  return bpf_prog_load(type, "ezio_probe", "GPL", insns, 2, opts);
}

}  // namespace

std::optional<std::string> kernel_btf_name(int fd) {
  char name[64] = {};
  bpf_btf_info info = {};
  info.name = reinterpret_cast<uintptr_t>(name);
  info.name_len = sizeof(name);
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || !info.kernel_btf) return std::nullopt;
  return std::string(name);
}

const std::vector<std::string>& denied_hook_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> v;
    const char* env = std::getenv(kDenyVariable);
    std::stringstream in(env ? env : "");
    std::string word;
    while (std::getline(in, word, ',')) {
      if (word.empty()) continue;
      if (word != "fentry" && word != "kprobe" && word != "tp_btf") {
        fail("{}: unknown hook kind '{}' (fentry, kprobe, tp_btf; comma-separated)", kDenyVariable,
             word);
      }
      v.push_back(word);
    }
    return v;
  }();
  return kinds;
}

void BtfDeleter::operator()(btf* b) const { btf__free(b); }

KernelProber::KernelProber() : vmlinux_(btf__load_vmlinux_btf()) {
  if (!vmlinux_) no_btf_ = fmt::format("no kernel BTF: {}", errno_text(errno));
}

KernelProber::~KernelProber() {
  close_concurrently(links_, kprobe_events_);  // the modules' BTF fds close after them
}

void KernelProber::load_modules() {
  if (modules_loaded_ || !vmlinux_) return;
  modules_loaded_ = true;
  uint32_t id = 0;
  while (bpf_btf_get_next_id(id, &id) == 0) {
    UniqueFd fd(bpf_btf_get_fd_by_id(id));
    if (!fd) continue;
    std::optional<std::string> name = kernel_btf_name(fd.get());
    if (!name || *name == "vmlinux" || modules_.count(*name)) continue;
    ModuleBtf m;
    m.types.reset(btf__load_from_kernel_by_id_split(id, vmlinux_.get()));
    if (!m.types) continue;
    m.fd = std::move(fd);
    modules_.emplace(*name, std::move(m));
  }
}

std::pair<int, int> KernelProber::find(const std::string& name, uint32_t kind) {
  if (!vmlinux_) return {-ENOENT, 0};
  int id = btf__find_by_name_kind(vmlinux_.get(), name.c_str(), kind);
  if (id > 0) return {id, 0};
  load_modules();
  for (auto& [mod, m] : modules_) {
    id = btf__find_by_name_kind(m.types.get(), name.c_str(), kind);
    if (id > 0) return {id, m.fd.get()};
  }
  return {-ENOENT, 0};
}

uint32_t KernelProber::vmlinux_function_proto(const std::string& function) const {
  if (!vmlinux_) return 0;
  int id = btf__find_by_name_kind(vmlinux_.get(), function.c_str(), BTF_KIND_FUNC);
  return id > 0 ? btf__type_by_id(vmlinux_.get(), id)->type : 0;
}

std::optional<std::pair<uint32_t, std::string>> KernelProber::locate(const std::string& name,
                                                                     uint32_t kind) {
  auto [id, obj_fd] = find(name, kind);
  if (id <= 0) return std::nullopt;
  for (auto& [mod, m] : modules_) {
    if (obj_fd != 0 && m.fd.get() == obj_fd) return std::pair{static_cast<uint32_t>(id), mod};
  }
  return std::pair{static_cast<uint32_t>(id), std::string()};
}

ProbeOutcome KernelProber::load_and_attach(uint32_t expected_attach_type, const std::string& name,
                                           uint32_t kind) {
  if (!vmlinux_) return {false, no_btf_};
  auto [id, obj_fd] = find(name, kind);
  if (id < 0) return {false, fmt::format("{} not in the kernel's BTF", name)};
  LIBBPF_OPTS(bpf_prog_load_opts, opts);
  opts.expected_attach_type = static_cast<bpf_attach_type>(expected_attach_type);
  opts.attach_btf_id = id;
  opts.attach_btf_obj_fd = obj_fd;
  UniqueFd prog(load_minimal(BPF_PROG_TYPE_TRACING, &opts));
  if (prog.get() < 0) return failed(errno);
  // BPF_RAW_TRACEPOINT_OPEN with no name attaches fentry/fexit/tp_btf programs on every kernel
  // that has them (5.5+); BPF_LINK_CREATE for tracing programs only came with 5.19.
  UniqueFd link(bpf_raw_tracepoint_open(nullptr, prog.get()));
  if (link.get() < 0) return failed(errno);
  links_.push_back(link.release());  // closed all together at the end (concurrent_close.h)
  return {true, ""};
}

ProbeOutcome KernelProber::fentry(const std::string& function) {
  if (auto d = denial("fentry")) return *d;
  return load_and_attach(BPF_TRACE_FENTRY, function, BTF_KIND_FUNC);
}

ProbeOutcome KernelProber::tp_btf(const std::string& tracepoint) {
  if (auto d = denial("tp_btf")) return *d;
  return load_and_attach(BPF_TRACE_RAW_TP, "btf_trace_" + tracepoint, BTF_KIND_TYPEDEF);
}

int KernelProber::tracepoint_args(const std::string& tracepoint) {
  auto [id, obj_fd] = find("btf_trace_" + tracepoint, BTF_KIND_TYPEDEF);
  if (id < 0) return -1;
  const btf* types = vmlinux_.get();
  for (auto& [mod, m] : modules_) {
    if (m.fd.get() == obj_fd && obj_fd != 0) types = m.types.get();
  }
  // typedef -> pointer -> function prototype (void *__data, the tracepoint's arguments...)
  const btf_type* t = btf__type_by_id(types, id);
  for (int hops = 0; t && hops < 2; ++hops) t = btf__type_by_id(types, t->type);
  if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1) return -1;
  return btf_vlen(t) - 1;
}

ProbeOutcome KernelProber::kprobe(const std::string& function, bool retprobe) {
  if (auto d = denial("kprobe")) return *d;
  std::ifstream type_file("/sys/bus/event_source/devices/kprobe/type");
  int type = -1;
  if (!(type_file >> type)) return {false, "no kprobe PMU (kernel built without CONFIG_KPROBES)"};
  perf_event_attr attr = {};
  attr.size = sizeof(attr);
  attr.type = type;
  if (retprobe) {
    int bit = retprobe_bit();
    if (bit < 0) return {false, "the kprobe PMU has no retprobe format"};
    attr.config |= 1ull << bit;
  }
  attr.config1 = reinterpret_cast<uintptr_t>(function.c_str());
  attr.config2 = 0;
  // The probe is registered system-wide on CPU 0 but never enabled: it only has to exist and take
  // the program.
  UniqueFd event(
      static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC)));
  if (event.get() < 0) return failed(errno);
  // A kernel can register the kprobe and still refuse BPF on it (built without CONFIG_BPF_EVENTS,
  // a security policy): only a program really attached answers.
  UniqueFd prog(load_minimal(BPF_PROG_TYPE_KPROBE, nullptr));
  if (prog.get() < 0) return failed(errno);
  if (ioctl(event.get(), PERF_EVENT_IOC_SET_BPF, prog.get()) < 0) return failed(errno);
  // Unregistering a kprobe waits for an RCU grace period: closed with the trial links.
  kprobe_events_.push_back(event.release());
  return {true, ""};
}

}  // namespace ezio::recorder
