// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/probe/probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string_view>

#include "common/error.h"
#include "common/log.h"
#include "hooks.h"
#include "recorder/core/recording_info.h"
#include "recorder/probe/probe_kernel.h"

namespace ezio::recorder {
namespace {

// The two hook kinds that see a kernel function's real entry and exit, in order of preference.
enum class Exact { fentry, kprobe };

// A kernel function of bpf/hooks.h, hooked by fentry/fexit or kprobe/kretprobe.
struct ExactFunction {
  std::string function;
  // skeleton programs <program>_entry and <program>_exit (fentry/fexit), <program>_kprobe and
  // <program>_kretprobe (bpf/variants.bpf.h)
  std::string program;
};

// The VFS functions, in the table's order: vfs_read and vfs_write first.
const std::vector<ExactFunction>& vfs_functions() {
#define EZIO_VFS_FUNCTION_ROW_(fs, fn, op, shape) {#fn, EZIO_HOOK_STR(EZIO_VFS_PROG(fn))},
  static const std::vector<ExactFunction> v = {EZIO_VFS_FUNCTIONS(EZIO_VFS_FUNCTION_ROW_)};
#undef EZIO_VFS_FUNCTION_ROW_
  return v;
}

// The recorded syscalls' functions (bpf/hooks.h, EZIO_SYSCALL_FUNCTIONS): function
// "__x64_sys_read", program "ezio_sc_read".
const std::vector<ExactFunction>& syscall_functions() {
#define EZIO_SYSCALL_FUNCTION_ROW_(name, fn) {"__x64_sys_" #fn, EZIO_HOOK_STR(EZIO_SC_PROG(name))},
  static const std::vector<ExactFunction> v = {EZIO_SYSCALL_FUNCTIONS(EZIO_SYSCALL_FUNCTION_ROW_)};
#undef EZIO_SYSCALL_FUNCTION_ROW_
  return v;
}

// The functions' suffixes, for the archive's property (EZIOTRACE::PROBE::syscall).
std::vector<std::string> syscall_names() {
#define EZIO_SYSCALL_NAME_(name, fn) #fn,
  return {EZIO_SYSCALL_FUNCTIONS(EZIO_SYSCALL_NAME_)};
#undef EZIO_SYSCALL_NAME_
}

// The tracepoint programs of the syscall layer (bpf/syscall.bpf.h).
constexpr const char* kSysEnter = "ezio_sys_enter";
constexpr const char* kSysExit = "ezio_sys_exit";

struct Tracepoint {
  std::string name;
  std::string program;
};

struct FileSystemHooks {
  std::string fs;
  std::vector<ExactFunction> functions;  // fentry, else kprobe, when all of them attach
  std::vector<Tracepoint> tps;           // fallback
};

// The hooks of one file system, added in the order the table names the file systems.
FileSystemHooks& hooks_of(std::vector<FileSystemHooks>& v, const std::string& fs) {
  auto it = std::find_if(v.begin(), v.end(), [&fs](const auto& h) { return h.fs == fs; });
  return it != v.end() ? *it : v.emplace_back(FileSystemHooks{fs, {}, {}});
}

// bpf/hooks.h's FS lines, grouped by file system.
const std::vector<FileSystemHooks>& fs_hooks() {
  static const std::vector<FileSystemHooks> v = [] {
    std::vector<FileSystemHooks> hooks;
#define EZIO_FS_FUNCTION_ROW_(fs, fn, op, shape) \
  hooks_of(hooks, #fs).functions.push_back({#fn, EZIO_HOOK_STR(EZIO_FS_PROG(fn))});
    EZIO_FS_FUNCTIONS(EZIO_FS_FUNCTION_ROW_)
#undef EZIO_FS_FUNCTION_ROW_
#define EZIO_FS_TRACEPOINT_ROW_(fs, tp, op, shape) \
  hooks_of(hooks, #fs).tps.push_back({#tp, EZIO_HOOK_STR(EZIO_FS_TP_PROG(tp))});
    EZIO_FS_TRACEPOINTS(EZIO_FS_TRACEPOINT_ROW_)
#undef EZIO_FS_TRACEPOINT_ROW_
    return hooks;
  }();
  return v;
}

// Direct I/O of ext4 and xfs goes through iomap: its tracepoint completes ext4's tracepoints,
// which see none (btrfs enters iomap below it).
const Tracepoint& iomap_dio() {
#define EZIO_FS_IOMAP_ROW_(fs, tp, op, shape) \
  { #tp, EZIO_HOOK_STR(EZIO_FS_TP_PROG(tp)) }
  static const Tracepoint tp = EZIO_FS_IOMAP_TRACEPOINT(EZIO_FS_IOMAP_ROW_);
#undef EZIO_FS_IOMAP_ROW_
  return tp;
}

// Counts the VFS and FS entries a missed kretprobe left pending when their thread ends.
constexpr const char* kKprobeThreadExit = "ezio_vfs_fs_kprobe_thread_exit";

const char* exact_name(Exact kind) {
  return kind == Exact::fentry ? "fentry/fexit" : "kprobe/kretprobe";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

class Planner {
 public:
  explicit Planner(const LayerSet& layers) {
    for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) plan_.layers[l].on = layers[l];
  }

  ProbePlan run() {
    plan_syscall();
    if (plan_.layers[EZIO_LAYER_VFS].on) plan_vfs();
    if (plan_.layers[EZIO_LAYER_FS].on) plan_fs();
    plan_tracepoint_layer(
        EZIO_LAYER_PAGECACHE,
        {"mm_filemap_add_to_page_cache", "mm_filemap_get_pages", "mm_filemap_fault",
         "mm_filemap_delete_from_page_cache"},
        {"mm_filemap_map_pages", "writeback_dirty_folio", "balance_dirty_pages", "sched_switch"});
    plan_dirty_throttle();
    plan_tracepoint_layer(
        EZIO_LAYER_BLOCK,
        {"block_io_start", "block_rq_insert", "block_rq_issue", "block_rq_complete"},
        {"block_getrq", "block_rq_merge", "block_bio_backmerge", "block_bio_frontmerge"});
    for (auto& l : plan_.layers) {
      if (!l.on) l.accuracy = "off";
    }
    return std::move(plan_);
  }

 private:
  bool try_fentry(unsigned layer, const std::string& fn) {
    return record(layer, "fentry/" + fn, k_.fentry(fn));
  }
  bool try_tp(unsigned layer, const std::string& tp) {
    return record(layer, "tp_btf/" + tp, k_.tp_btf(tp));
  }
  bool try_kprobe(unsigned layer, const std::string& fn, bool retprobe) {
    return record(layer, (retprobe ? "kretprobe/" : "kprobe/") + fn, k_.kprobe(fn, retprobe));
  }
  // fentry (its trampoline serves fexit too), or kprobe and kretprobe, on fn.
  bool try_exact(unsigned layer, Exact kind, const std::string& fn) {
    return kind == Exact::fentry ? try_fentry(layer, fn)
                                 : try_kprobe(layer, fn, false) && try_kprobe(layer, fn, true);
  }
  bool record(unsigned layer, std::string hook, const ProbeOutcome& o) {
    plan_.trials.push_back({layer, {std::move(hook), o.ok, o.why}});
    return o.ok;
  }

  // fentry/fexit on the recorded syscalls' own functions where all of them take it: the node's
  // other syscalls then pay nothing. Else the raw tracepoints, which every syscall passes. Never a
  // mix: one syscall seen by both would be recorded twice, and a part of the list on the
  // tracepoints would make every syscall pay them anyway.
  void plan_syscall() {
    // The syscall layer is the anchor the others nest in: always recorded.
    auto& p = plan_.layers[EZIO_LAYER_SYSCALL];
    p.on = true;
    p.accuracy = "exact";
    if (hook_syscall_functions()) {
      p.hook = "fentry/fexit __x64_sys_{" + join(syscall_names(), ",") + "}";
      return;
    }
    bool ok = try_tp(EZIO_LAYER_SYSCALL, "sys_enter") && try_tp(EZIO_LAYER_SYSCALL, "sys_exit");
    if (!ok)
      fail(
          "tp_btf/sys_enter and sys_exit cannot be attached on this kernel: nothing can be "
          "recorded");
    p.hook = "tp_btf/sys_enter+sys_exit";
    plan_.programs.insert(kSysEnter);
    plan_.programs.insert(kSysExit);
  }

  // Whether fentry takes every function of bpf/hooks.h's syscall list, their programs then added
  // to the plan. The trials stop at the first refusal: a kernel without fentry refuses them all.
  bool hook_syscall_functions() {
#if defined(__x86_64__)
    for (const auto& f : syscall_functions()) {
      if (!try_fentry(EZIO_LAYER_SYSCALL, f.function)) return false;
    }
    // The entries share one body by a tail call, the exits another, which the kernel allows
    // between functions of one prototype (bpf/syscall_functions.bpf.h); a function of another
    // keeps the whole bodies in its programs.
    const uint32_t body_proto = k_.vmlinux_function_proto(EZIO_HOOK_STR(EZIO_SC_BODY_FUNCTION));
    std::vector<std::string> whole;
    for (const auto& f : syscall_functions()) {
      bool shared = body_proto && k_.vmlinux_function_proto(f.function) == body_proto;
      const char* suffix = shared ? "" : "_whole";
      plan_.programs.insert(f.program + "_entry" + suffix);
      plan_.programs.insert(f.program + "_exit" + suffix);
      if (!shared) whole.push_back(f.function);
    }
    if (whole.size() < syscall_functions().size()) {
      plan_.programs.insert(EZIO_HOOK_STR(EZIO_SC_ENTRY_BODY));
      plan_.programs.insert(EZIO_HOOK_STR(EZIO_SC_EXIT_BODY));
    }
    if (!whole.empty()) {
      spdlog::debug("syscall programs with the whole bodies (prototype unlike {}'s): {}",
                    EZIO_HOOK_STR(EZIO_SC_BODY_FUNCTION), join(whole, ","));
    }
    return true;
#else
    return false;  // the list names x86-64's functions (__x64_sys_*)
#endif
  }

  // fentry/fexit first, then kprobe/kretprobe: both give the real VFS times. A kind takes the layer
  // when it hooks vfs_read and vfs_write, with every other VFS function it can hook. Only one kind
  // is loaded: a call seen by both would be recorded twice.
  void plan_vfs() {
    auto& p = plan_.layers[EZIO_LAYER_VFS];
    for (Exact kind : {Exact::fentry, Exact::kprobe}) {
      std::vector<std::string> hooked = hook_vfs(kind);
      if (hooked.empty()) continue;
      plan_.vfs_hook = kind == Exact::fentry ? VfsHook::fentry : VfsHook::kprobe;
      p.hook = fmt::format("{} {}", exact_name(kind), join(hooked, ","));
      p.accuracy = "exact";
      return;
    }
    plan_.vfs_hook = VfsHook::derived;
    plan_.vfs_derived = true;
    p.hook = "derived from tp_btf/sys_exit (fd -> struct file)";
    p.accuracy = "derived";
  }

  // The VFS functions this kind of hook attaches to, their programs added to the plan; empty, and
  // nothing added, when vfs_read or vfs_write is not among them (they come first in
  // bpf/hooks.h, so a kind that cannot have them is not tried further).
  std::vector<std::string> hook_vfs(Exact kind) {
    std::vector<std::string> hooked;
    for (const auto& f : vfs_functions()) {
      bool ok = try_exact(EZIO_LAYER_VFS, kind, f.function);
      std::string_view fn = f.function;
      if (!ok && (fn == "vfs_read" || fn == "vfs_write")) return {};
      if (ok) hooked.push_back(f.function);
    }
    for (const auto& f : vfs_functions()) {
      if (std::find(hooked.begin(), hooked.end(), f.function) == hooked.end()) continue;
      add_exact(kind, f.program);
    }
    return hooked;
  }

  // Per file system: fentry/fexit, else kprobe/kretprobe (both exact: the functions' real times),
  // else its tracepoints. A kind takes a file system when all three of its functions attach; only
  // that kind's programs are loaded for it, as a call seen by two kinds would be recorded twice.
  void plan_fs() {
    std::vector<std::string> parts;
    bool any_exact = false, any_derived = false, iomap_wanted = false;
    for (const auto& h : fs_hooks()) {
      if (auto kind = hook_fs_functions(h)) {
        std::vector<std::string> names;
        for (const auto& f : h.functions) names.push_back(f.function);
        parts.push_back(fmt::format("{}: {} {}", h.fs, exact_name(*kind), join(names, ",")));
        any_exact = true;
        continue;
      }
      std::vector<std::string> tps;
      for (const auto& t : h.tps) {
        if (try_tp(EZIO_LAYER_FS, t.name)) {
          plan_.programs.insert(t.program);
          tps.push_back(t.name);
        }
      }
      if (!tps.empty()) {
        parts.push_back(fmt::format("{}: tp_btf/{}", h.fs, join(tps, ",")));
        any_derived = true;
        // ext4's tracepoints see no direct I/O; xfs's do (bpf/fs.bpf.h, iomap_dio_rw_begin).
        iomap_wanted = iomap_wanted || h.fs == "ext4";
      } else {
        parts.push_back(fmt::format("{}: none", h.fs));
      }
    }
    if (iomap_wanted && try_tp(EZIO_LAYER_FS, iomap_dio().name)) {
      plan_.programs.insert(iomap_dio().program);
      parts.push_back(fmt::format("iomap: tp_btf/{}", iomap_dio().name));
    }
    auto& p = plan_.layers[EZIO_LAYER_FS];
    p.hook = join(parts, "; ");
    p.accuracy = any_exact && any_derived ? "mixed"
                 : any_exact              ? "exact"
                 : any_derived            ? "derived"
                                          : "none";
  }

  // The first kind that attaches to all three functions of the file system, its programs added to
  // the plan; nothing when neither does. Every function is tried, so that `probes -v` shows each.
  std::optional<Exact> hook_fs_functions(const FileSystemHooks& h) {
    for (Exact kind : {Exact::fentry, Exact::kprobe}) {
      bool all = true;
      for (const auto& f : h.functions) all = try_exact(EZIO_LAYER_FS, kind, f.function) && all;
      if (!all) continue;
      for (const auto& f : h.functions) add_exact(kind, f.program);
      return kind;
    }
    return std::nullopt;
  }

  // Layers of tracepoints only (their programs belong to bpf/block*.h, bpf/pagecache*.h): the
  // probe reports whether their hooks attach here. `tps` make the layer's accuracy; `helpers`,
  // tried as well, only complete them (block_getrq stands in for block_io_start before 6.5).
  void plan_tracepoint_layer(unsigned layer, std::vector<std::string> tps,
                             std::vector<std::string> helpers) {
    auto& p = plan_.layers[layer];
    if (!p.on) return;
    std::vector<std::string> ok, attached;
    for (const auto& t : tps) {
      if ((plan_.tracepoints[t] = try_tp(layer, t))) ok.push_back(t);
    }
    attached = ok;
    for (const auto& t : helpers) {
      if ((plan_.tracepoints[t] = try_tp(layer, t))) attached.push_back(t);
    }
    // Every hook that attached is named: the analyzers tell from it what was observed
    // (analysis/model/observed.cpp).
    p.hook = ok.empty() ? "none" : "tp_btf/" + join(attached, ",");
    p.accuracy = ok.size() == tps.size() ? "exact" : ok.empty() ? "none" : "partial";
  }

  // Dirty throttling needs its tracepoint, sched_switch (which ends each pause) and an argument
  // layout bpf/pagecache.bpf.h knows; without all three it is left out.
  void plan_dirty_throttle() {
    auto& tps = plan_.tracepoints;
    if (!plan_.layers[EZIO_LAYER_PAGECACHE].on || !tps["balance_dirty_pages"] ||
        !tps["sched_switch"]) {
      return;
    }
    int n = k_.tracepoint_args("balance_dirty_pages");
    if (n == 8 || n == 12) {
      plan_.dirty_throttle_args = n;
      return;
    }
    // Attached but unusable: the archive must not say it was observed
    // (analysis/model/observed.cpp).
    std::string& hook = plan_.layers[EZIO_LAYER_PAGECACHE].hook;
    if (auto at = hook.find(",balance_dirty_pages"); at != std::string::npos) {
      hook.erase(at, std::string_view(",balance_dirty_pages").size());
    }
  }

  void add_exact(Exact kind, const std::string& program) {
    bool fentry = kind == Exact::fentry;
    plan_.programs.insert(program + (fentry ? "_entry" : "_kprobe"));
    plan_.programs.insert(program + (fentry ? "_exit" : "_kretprobe"));
    // A kretprobe can miss returns: what they leave pending at a thread's exit must be counted.
    if (!fentry) plan_.programs.insert(kKprobeThreadExit);
  }

  KernelProber k_;
  ProbePlan plan_;
};

}  // namespace

LayerSet all_layers() {
  LayerSet s{};
  s.fill(true);
  return s;
}

LayerSet parse_layers(const std::string& text) {
  if (text.empty() || text == "all") return all_layers();
  LayerSet s{};
  s[EZIO_LAYER_PROCESS] = true;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    bool found = false;
    for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
      if (l != EZIO_LAYER_PROCESS && word == layer_name(l)) {
        s[l] = found = true;
      }
    }
    if (!found) {
      fail(
          "unknown layer '{}' in --layers: use syscall, vfs, fs, pagecache, block "
          "(comma-separated)",
          word);
    }
  }
  return s;
}

ProbePlan plan_probes(const LayerSet& layers) { return Planner(layers).run(); }

const char* vfs_hook_name(VfsHook h) {
  switch (h) {
    case VfsHook::off:
      return "off";
    case VfsHook::fentry:
      return "fentry";
    case VfsHook::kprobe:
      return "kprobe";
    case VfsHook::derived:
      return "derived";
  }
  return "?";
}

std::string probe_property(const LayerPlan& p) {
  return p.on ? fmt::format("{} ({})", p.hook, p.accuracy) : std::string();
}

}  // namespace ezio::recorder
