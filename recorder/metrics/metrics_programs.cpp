// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/metrics_programs.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/error.h"
#include "common/log.h"
#include "recorder/core/bpf_object.h"
#include "recorder/core/syscall_table.h"
#include "recorder/metrics/fs_hooks.h"
#include "recorder/probe/attach_ids.h"
#include "recorder/probe/probe_kernel.h"
// After the layout it names (metrics.h, through metrics_programs.h).
#include "metrics.skel.h"

namespace ezio::recorder::metrics {
namespace {

uint8_t op_of(const SyscallInfo& s) {
  switch (s.kind) {
    case IoKind::Read:
      return EZIO_M_SC_READ;
    case IoKind::Write:
      return EZIO_M_SC_WRITE;
    case IoKind::Open:
      return EZIO_M_SC_OPEN;
    case IoKind::Close:
      return EZIO_M_SC_CLOSE;
    case IoKind::Flush:
      if (s.name == "fsync") return EZIO_M_SC_FSYNC;
      if (s.name == "fdatasync") return EZIO_M_SC_FDATASYNC;
      if (s.name == "sync_file_range") return EZIO_M_SC_SYNC_FILE_RANGE;
      return EZIO_M_NONE;
    default:
      return EZIO_M_NONE;
  }
}

// The tracepoint's argument count from the kernel's BTF (btf_trace_<name>: a pointer to a
// prototype of void *__data and the arguments), or from module's when given (a file system built
// as a module: its BTF is /sys/kernel/btf/<module>, split on the kernel's); -1 when there is no
// such tracepoint, -2 when the BTF cannot be read (the load will say what is wrong).
int tracepoint_args(const char* name, const char* module = nullptr) {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return -2;
  btf* in = vmlinux;
  if (module) {
    in = btf__parse_split(fmt::format("/sys/kernel/btf/{}", module).c_str(), vmlinux);
    if (!in) {
      btf__free(vmlinux);
      return -1;  // not loaded
    }
  }
  int id = btf__find_by_name_kind(in, fmt::format("btf_trace_{}", name).c_str(), BTF_KIND_TYPEDEF);
  int n = -1;
  if (id > 0) {
    const btf_type* t = btf__type_by_id(in, id);
    for (int hops = 0; t && hops < 2; ++hops) t = btf__type_by_id(in, t->type);
    if (t && btf_is_func_proto(t) && btf_vlen(t) >= 1) n = btf_vlen(t) - 1;
  }
  if (in != vmlinux) btf__free(in);
  btf__free(vmlinux);
  return n;
}

bool has_tracepoint(const char* name) { return tracepoint_args(name) != -1; }

// A file system's tracepoint, in the kernel or in the module of its name.
bool has_fs_tracepoint(const char* fs, const char* name) {
  return has_tracepoint(name) || tracepoint_args(name, fs) != -1;
}

// The programs of tracepoints this kernel lacks (6.1 has no mm_filemap_get_pages) are left out,
// (the FS layer's: fs_hooks.cpp)
// their series stay absent; balance_dirty_pages' program is the one of the kernel's layout.
void plan_optional_programs(::metrics* skel) {
  auto leave_out = [](bpf_program* p, const char* tp) {
    if (!bpf_program__autoload(p)) return;  // its layer is not kept
    bpf_program__set_autoload(p, false);
    spdlog::warn("metrics: this kernel has no usable {} tracepoint; its series are not kept", tp);
  };
  if (!has_tracepoint("mm_filemap_add_to_page_cache") || !has_tracepoint("mm_filemap_get_pages")) {
    leave_out(skel->progs.ezio_m_pc_add, "mm_filemap_add_to_page_cache");
    leave_out(skel->progs.ezio_m_pc_get_pages, "mm_filemap_get_pages");
  }
  if (!has_tracepoint("mm_filemap_delete_from_page_cache")) {
    leave_out(skel->progs.ezio_m_pc_delete, "mm_filemap_delete_from_page_cache");
  }
  if (!bpf_program__autoload(skel->progs.ezio_m_throttle_8)) return;  // no page-cache layer
  int throttle = tracepoint_args("balance_dirty_pages");
  if (throttle != 8 && throttle != -2)
    bpf_program__set_autoload(skel->progs.ezio_m_throttle_8, false);
  if (throttle != 12) bpf_program__set_autoload(skel->progs.ezio_m_throttle_12, false);
  if (throttle != 8 && throttle != 12 && throttle != -2) {
    spdlog::warn(
        "metrics: balance_dirty_pages has {} arguments here (8 or 12 known): the time "
        "throttled by the dirty-page limits is not kept",
        throttle);
  }
}

bool vfs_counts(uint8_t op) {
  return op == EZIO_M_SC_READ || op == EZIO_M_SC_WRITE || op == EZIO_M_SC_FSYNC ||
         op == EZIO_M_SC_FDATASYNC;
}

constexpr std::string_view kSyscallFunction = "__x64_sys_";

// The system call an fentry/fexit program of metrics_syscalls.bpf.h hooks ("write"), "" for the
// other programs.
std::string fentry_syscall(const bpf_program* p) {
  std::string_view section = bpf_program__section_name(p);
  for (std::string_view prefix : {"fentry/", "fexit/"}) {
    if (section.starts_with(prefix)) {
      section.remove_prefix(prefix.size());
      if (section.starts_with(kSyscallFunction))
        return std::string(section.substr(kSyscallFunction.size()));
    }
  }
  return "";
}

uint8_t op_of_name(const std::string& name) {
  for (const SyscallInfo& s : syscall_table()) {
    if (s.name == name) return op_of(s);
  }
  return EZIO_M_NONE;
}

// fentry when every counted system call's function takes it (probed as the recorder probes its
// hooks: a minimal program really loaded and attached), else the two syscall tracepoints.
SyscallHook choose_syscall_hook(::metrics* skel) {
  KernelProber kernel;
  bpf_program* p;
  bpf_object__for_each_program(p, skel->obj) {
    std::string name = fentry_syscall(p);
    if (name.empty() || std::string_view(bpf_program__section_name(p)).starts_with("fexit/"))
      continue;
    ProbeOutcome o = kernel.fentry(std::string(kSyscallFunction) + name);
    if (!o.ok) {
      spdlog::info(
          "metrics: system calls counted at the sys_enter/sys_exit tracepoints (fentry on {}{}: "
          "{})",
          kSyscallFunction, name, o.why);
      return SyscallHook::tracepoint;
    }
  }
  spdlog::info("metrics: system calls counted by fentry/fexit on their functions");
  return SyscallHook::fentry;
}

// Either the two tracepoints' programs or the fentry ones are loaded; without the syscall layer,
// the fentry programs of the calls the VFS layer does not count are not.
void plan_syscall_hook(::metrics* skel, SyscallHook hook, const MetricsLayers& l) {
  bool tracepoints = hook == SyscallHook::tracepoint && (l.syscall || l.vfs);
  bpf_program__set_autoload(skel->progs.ezio_m_sys_enter, tracepoints);
  bpf_program__set_autoload(skel->progs.ezio_m_sys_exit, tracepoints);
  bpf_program* p;
  bpf_object__for_each_program(p, skel->obj) {
    std::string name = fentry_syscall(p);
    if (name.empty()) continue;
    bool wanted = l.syscall || (l.vfs && vfs_counts(op_of_name(name)));
    bpf_program__set_autoload(p, hook == SyscallHook::fentry && wanted);
  }
}

// The programs of the layers not kept are not loaded; the flags tell the shared ones what to count.
void plan_layers(::metrics* skel, const MetricsLayers& l) {
  auto off = [](std::initializer_list<bpf_program*> progs) {
    for (bpf_program* p : progs) bpf_program__set_autoload(p, false);
  };
  auto& p = skel->progs;
  if (!l.pagecache) {
    off({p.ezio_m_pc_add, p.ezio_m_pc_get_pages, p.ezio_m_pc_delete, p.ezio_m_throttle_8,
         p.ezio_m_throttle_12});
  }
  // Dirtying is a page-cache series and what charges writeback to its dirtier.
  if (!l.pagecache && !l.block) off({p.ezio_m_dirty});
  if (!l.block) {
    off({p.ezio_m_io_start, p.ezio_m_rq_issue, p.ezio_m_rq_merge, p.ezio_m_rq_complete});
  }
  skel->rodata->keep_syscall = l.syscall;
  skel->rodata->keep_vfs = l.vfs;
  skel->rodata->keep_pagecache = l.pagecache;
}

bool kernel_config_readable() {
  utsname u{};
  if (uname(&u) != 0) return false;
  return access(fmt::format("/boot/config-{}", u.release).c_str(), R_OK) == 0 ||
         access("/proc/config.gz", R_OK) == 0;
}

}  // namespace

MetricsLayers parse_metrics_layers(const std::string& spec) {
  if (spec == "all") return {};
  MetricsLayers l{false, false, false, false, false};
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    std::string name = spec.substr(start, end == std::string::npos ? end : end - start);
    if (name == "syscall")
      l.syscall = true;
    else if (name == "vfs")
      l.vfs = true;
    else if (name == "fs")
      l.fs = true;
    else if (name == "pagecache")
      l.pagecache = true;
    else if (name == "block")
      l.block = true;
    else
      fail("unknown metrics layer '{}': all, or some of syscall, vfs, fs, pagecache, block", name);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return l;
}

void MetricsPrograms::Destroy::operator()(::metrics* skel) const { metrics__destroy(skel); }

MetricsPrograms::MetricsPrograms(const MetricsConfig& config)
    : max_series_(config.max_series),
      max_mounts_(config.max_mounts),
      latency_every_(config.latency_every) {
  const uint32_t max_series = config.max_series;
  if (max_series == 0) fail("the metrics' table needs room for one series at least");
  if (config.max_mounts == 0) fail("the metrics' mount table needs room for one mount at least");
  if (config.latency_every == 0) fail("the metrics' latency is measured one call in N, N >= 1");
  route_libbpf_logs();
  // The recorder's handlers of tp_btf/ sections are libbpf's for the whole process (attach_ids.h):
  // these programs load through them too, with their attach points found here.
  register_attach_handlers();
  // libbpf reads the kernel's configuration (CONFIG_HZ, for the throttling pauses) from
  // /boot/config-<release> or /proc/config.gz, and fails the whole load when neither is there (a
  // kernel booted from another system's root, as the qemu guests are): then it is given the value
  // the program would fall back to (libbpf goes to the file for any CONFIG_ it was not given).
  LIBBPF_OPTS(bpf_object_open_opts, open_opts,
              .kconfig = kernel_config_readable() ? nullptr : "CONFIG_HZ=250\n");
  skel_.reset(metrics__open_opts(&open_opts));
  if (!skel_) fail("cannot open the metrics' BPF object: {}", errno_text(errno));
  for (const SyscallInfo& s : syscall_table()) {
    uint8_t op = op_of(s);
    // Without the syscall layer, the VFS layer's calls only.
    if (!config.layers.syscall && !vfs_counts(op)) op = EZIO_M_NONE;
    if (s.nr < EZIO_MAX_SYSCALL_NR) skel_->rodata->syscall_op[s.nr] = op;
  }
  skel_->rodata->latency_every = config.latency_every;
  if (int err = bpf_map__set_max_entries(skel_->maps.series, max_series); err != 0) {
    fail("cannot size the metrics' table: {}", errno_text(-err));
  }
  // The hot slots (bpf/metrics_cache.bpf.h): per CPU and preallocated, so bounded apart from the
  // table; the series beyond them are counted in the table itself.
  hot_slots_ = std::min<uint32_t>(max_series, EZIO_M_HOT_SLOTS);
  for (bpf_map* m : {skel_->maps.slots, skel_->maps.slot_of, skel_->maps.free_slots}) {
    if (int err = bpf_map__set_max_entries(m, hot_slots_); err != 0) {
      fail("cannot size the metrics' hot slots: {}", errno_text(-err));
    }
  }
  if (int err = bpf_map__set_max_entries(skel_->maps.mounts, config.max_mounts); err != 0) {
    fail("cannot size the metrics' mount table: {}", errno_text(-err));
  }
  plan_layers(skel_.get(), config.layers);
  hook_ = config.layers.syscall || config.layers.vfs ? choose_syscall_hook(skel_.get())
                                                     : SyscallHook::none;
  plan_syscall_hook(skel_.get(), hook_, config.layers);
  // Before 6.5 requests start at block_getrq, which the metrics do not take: their requests are
  // then owned from their issue (a flush its asker's, the others no one's).
  if (config.layers.block && !has_tracepoint("block_io_start")) {
    bpf_program__set_autoload(skel_->progs.ezio_m_io_start, false);
    spdlog::warn(
        "metrics: this kernel has no block_io_start tracepoint; block requests are "
        "counted per device only");
  }
  plan_optional_programs(skel_.get());
  fs_hooks_ = plan_fs_hooks(skel_.get(), config.layers.fs, has_fs_tracepoint);
  {
    AttachIdsInUse ids(skel_->obj, find_attach_ids(btf_attach_sections(skel_->obj)));
    if (int err = metrics__load(skel_.get()); err != 0) {
      fail("cannot load the metrics' BPF programs: {}", errno_text(-err));
    }
  }
  for (uint32_t i = 0; i < hot_slots_; ++i) free_slot(i);
  if (int err = metrics__attach(skel_.get()); err != 0) {
    fail("cannot attach the metrics' BPF programs: {}", errno_text(-err));
  }
}

MetricsPrograms::~MetricsPrograms() = default;

// A series' counters summed over the CPUs (the table is per CPU).
static void add_cpus(const std::vector<ezio_metric_value>& cpus, ezio_metric_value& sum) {
  for (const ezio_metric_value& c : cpus) {
    sum.count += c.count;
    sum.bytes += c.bytes;
    sum.errors += c.errors;
    sum.writeback += c.writeback;
    sum.sum_ns += c.sum_ns;
    for (unsigned i = 0; i < EZIO_M_HIST; ++i) sum.hist[i] += c.hist[i];
  }
}

std::vector<Series> MetricsPrograms::read() const {
  int fd = bpf_map__fd(skel_->maps.series);
  int slot_of = bpf_map__fd(skel_->maps.slot_of), slots = bpf_map__fd(skel_->maps.slots);
  static_assert(sizeof(ezio_metric_value) % 8 == 0, "per-CPU values are 8-byte aligned");
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) fail("cannot count the CPUs: {}", errno_text(-cpus));
  std::vector<ezio_metric_value> per_cpu(static_cast<size_t>(cpus));
  std::vector<Series> out;
  ezio_metric_key key{}, next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    Series s;
    s.key = next;
    // A series removed meanwhile (forget) is skipped.
    if (bpf_map_lookup_elem(fd, &next, per_cpu.data()) == 0) {
      add_cpus(per_cpu, s.value);
      // What the threads counted in its hot slot, when it has one.
      uint32_t slot = 0;
      if (bpf_map_lookup_elem(slot_of, &next, &slot) == 0 &&
          bpf_map_lookup_elem(slots, &slot, per_cpu.data()) == 0)
        add_cpus(per_cpu, s.value);
      out.push_back(s);
    }
    key = next;
    prev = &key;
  }
  return out;
}

// A slot zeroed, then among the free ones.
void MetricsPrograms::free_slot(uint32_t slot) const {
  int cpus = libbpf_num_possible_cpus();
  std::vector<ezio_metric_value> zero(static_cast<size_t>(cpus > 0 ? cpus : 1));
  bpf_map_update_elem(bpf_map__fd(skel_->maps.slots), &slot, zero.data(), BPF_ANY);
  bpf_map_update_elem(bpf_map__fd(skel_->maps.free_slots), nullptr, &slot, BPF_ANY);
}

void MetricsPrograms::forget(const std::vector<ezio_metric_key>& keys) const {
  // The slots of the series dropped at the previous snapshot go back now: a program that found
  // one just before its series was dropped has long finished with it.
  for (uint32_t slot : released_) free_slot(slot);
  released_.clear();
  int fd = bpf_map__fd(skel_->maps.series), slot_of = bpf_map__fd(skel_->maps.slot_of);
  for (const ezio_metric_key& k : keys) {
    uint32_t slot = 0;
    if (bpf_map_lookup_elem(slot_of, &k, &slot) == 0 && bpf_map_delete_elem(slot_of, &k) == 0)
      released_.push_back(slot);
    bpf_map_delete_elem(fd, &k);
  }
}

std::vector<uint32_t> MetricsPrograms::mount_ids() const {
  int fd = bpf_map__fd(skel_->maps.mounts);
  std::vector<uint32_t> out;
  uint32_t key = 0, next = 0;
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    out.push_back(next);
    key = next;
    prev = &key;
  }
  return out;
}

void MetricsPrograms::forget_mounts(const std::vector<uint32_t>& ids) const {
  int fd = bpf_map__fd(skel_->maps.mounts);
  for (uint32_t id : ids) bpf_map_delete_elem(fd, &id);
}

std::optional<std::string> MetricsPrograms::made_cgroup_path(uint64_t id) const {
  char path[EZIO_M_CGROUP_PATH] = {};
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.cgroup_names), &id, path) != 0) return {};
  return std::string(path, strnlen(path, sizeof(path)));
}

void MetricsPrograms::forget_cgroup_names(const std::set<uint64_t>& ids) const {
  int fd = bpf_map__fd(skel_->maps.cgroup_names);
  for (uint64_t id : ids) bpf_map_delete_elem(fd, &id);
}

std::array<uint64_t, EZIO_M_OP_COUNT> MetricsPrograms::overflow() const {
  int fd = bpf_map__fd(skel_->maps.overflow);
  std::array<uint64_t, EZIO_M_OP_COUNT> out{};
  for (uint32_t op = 0; op < EZIO_M_OP_COUNT; ++op) bpf_map_lookup_elem(fd, &op, &out[op]);
  return out;
}

const char* syscall_hook_name(SyscallHook h) {
  switch (h) {
    case SyscallHook::fentry:
      return "fentry";
    case SyscallHook::tracepoint:
      return "tracepoint";
    default:
      return "none";
  }
}

size_t MetricsPrograms::attached_programs() const {
  size_t n = 0;
  for (int i = 0; i < skel_->skeleton->prog_cnt; ++i)
    n += *skel_->skeleton->progs[i].link != nullptr;
  return n;
}

}  // namespace ezio::recorder::metrics
