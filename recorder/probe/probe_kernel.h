// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Asks the running kernel whether a hook can be used, by really loading and attaching a minimal
// program (as bcc's libbpf-tools do), never by guessing from the kernel version.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

struct btf;

namespace ezio::recorder {

// Hook kinds (fentry, kprobe, tp_btf) named in the environment variable EZIOTRACE_DENY_HOOKS
// (comma-separated), which every probe then reports as unavailable: a test and debugging aid that
// makes a kernel with the preferred hooks take the fallbacks. Fails on an unknown kind.
const std::vector<std::string>& denied_hook_kinds();

struct ProbeOutcome {
  bool ok = false;
  std::string why;  // errno text when !ok
};

struct BtfDeleter {
  void operator()(btf* b) const;
};

// The name of the kernel's BTF object fd ("vmlinux" or a module's), nullopt if it is no kernel
// BTF (a program's) or cannot be read.
std::optional<std::string> kernel_btf_name(int fd);

class KernelProber {
 public:
  // Parses the kernel's BTF (/sys/kernel/btf/vmlinux): tens of ms, so one prober serves a plan.
  KernelProber();
  ~KernelProber();
  KernelProber(const KernelProber&) = delete;
  KernelProber& operator=(const KernelProber&) = delete;

  // fentry (and by the same trampoline fexit) on a kernel or module function.
  ProbeOutcome fentry(const std::string& function);
  // tp_btf on a tracepoint (vmlinux or module), e.g. "ext4_da_write_begin".
  ProbeOutcome tp_btf(const std::string& tracepoint);
  // A kprobe (or kretprobe) on function takes a BPF program: one is loaded and attached through
  // the perf kprobe PMU.
  ProbeOutcome kprobe(const std::string& function, bool retprobe = false);
  // The number of arguments a tracepoint passes to a tp_btf program (its btf_trace_<name>
  // prototype without the leading data pointer), -1 when the kernel's BTF does not say.
  int tracepoint_args(const std::string& tracepoint);
  // The BTF id of a vmlinux function's prototype, 0 when the kernel's BTF lacks the function.
  // Functions of the same prototype share that id, which the kernel compares to take a tail call
  // between programs on them (bpf/syscall_functions.bpf.h).
  uint32_t vmlinux_function_proto(const std::string& function) const;
  // Where a type is: its id and the module whose BTF has it ("" for vmlinux), or nothing.
  std::optional<std::pair<uint32_t, std::string>> locate(const std::string& name, uint32_t kind);

 private:
  struct ModuleBtf {
    std::unique_ptr<btf, BtfDeleter> types;
    UniqueFd fd;  // kept open: attach_btf_obj_fd
  };
  // Finds a type by name in vmlinux, then in the modules; returns {type id, BTF object fd (0 for
  // vmlinux)} or {-errno, 0}.
  std::pair<int, int> find(const std::string& name, uint32_t kind);
  void load_modules();
  ProbeOutcome load_and_attach(uint32_t expected_attach_type, const std::string& name,
                               uint32_t kind);

  std::unique_ptr<btf, BtfDeleter> vmlinux_;  // null when the kernel has none
  std::string no_btf_;                        // why
  std::vector<int> links_;                    // attached trial programs, closed by the destructor
  std::vector<int> kprobe_events_;            // trial kprobes, closed one after another
  bool modules_loaded_ = false;
  std::map<std::string, ModuleBtf> modules_;
};

}  // namespace ezio::recorder
