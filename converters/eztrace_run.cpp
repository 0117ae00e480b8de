#include "converters/eztrace_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.h"

namespace ezio::converters {
namespace {

// The directories the `eztrace` launcher searches: EZTRACE_LIBRARY_PATH (':'-separated), then its
// compiled-in library directory.
std::vector<std::filesystem::path> eztrace_library_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* p = std::getenv("EZTRACE_LIBRARY_PATH")) {
    std::stringstream ss(p);
    std::string d;
    while (std::getline(ss, d, ':')) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  dirs.emplace_back("/usr/lib/x86_64-linux-gnu");
  dirs.emplace_back("/usr/local/lib");
  return dirs;
}

std::optional<std::filesystem::path> find_library(const std::string& file) {
  for (const auto& d : eztrace_library_dirs()) {
    if (std::filesystem::exists(d / file)) return d / file;
  }
  return std::nullopt;
}

std::vector<std::string> available_modules() {
  std::vector<std::string> out;
  for (const auto& d : eztrace_library_dirs()) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d, ec)) {
      std::string f = e.path().filename().string();
      if (f.rfind("libeztrace-", 0) != 0 || e.path().extension() != ".so") continue;
      std::string m = f.substr(11, f.size() - 14);
      if (m != "lib" && m != "core" && m != "instrumentation") out.push_back(m);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void log_report(const MergeReport& r, const std::filesystem::path& anchor) {
  for (const auto& w : r.warnings) spdlog::warn("{}", w);
  spdlog::info(
      "merged {} EZTrace process(es): {} user events, {} kernel events, {} kernel calls of "
      "EZTrace's own I/O filtered; {} user calls checked against their system calls",
      r.processes, r.user_events, r.kernel_events, r.own_io_calls, r.checked_calls);
  if (r.unsupported_events) {
    spdlog::warn("{} events of kinds the merge does not carry were left out", r.unsupported_events);
  }
  if (r.violations) {
    spdlog::error(
        "ALIGNMENT VIOLATIONS: {} — user and kernel events do not line up; the archive "
        "says so (EZIOTRACE::ALIGNMENT_VIOLATIONS). First ones:",
        r.violations);
    for (const auto& d : r.violation_details) spdlog::error("  {}", d);
  }
  if (r.clamped_events) {
    spdlog::warn("{} events were moved forward in time to keep their location ordered",
                 r.clamped_events);
  }
  spdlog::debug("merged archive written to {}", anchor.string());
}

}  // namespace

std::filesystem::path preload_helper_path() {
  // Tests and unusual installs name the helper explicitly.
  if (const char* p = std::getenv("EZIOTRACE_PRELOAD_HELPER"); p && *p) return p;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const auto& p : {exe.parent_path() / "libeziotrace-preload.so",
                        exe.parent_path() / "../lib/eziotrace/libeziotrace-preload.so"}) {
    if (std::filesystem::exists(p)) return p.lexically_normal();
  }
  fail("the EZTrace alignment helper libeziotrace-preload.so is not next to {} (broken install?)",
       exe.string());
}

EztraceSetup prepare_eztrace(const std::vector<std::string>& module_args,
                             const std::filesystem::path& work_dir) {
  auto lib = find_library("libeztrace-lib.so");
  if (!lib) {
    fail(
        "EZTrace is not installed: libeztrace-lib.so is in none of the EZTrace library "
        "directories (install the eztrace package, or set EZTRACE_LIBRARY_PATH)");
  }
  EztraceSetup s;
  std::vector<std::string> preload = {lib->string()};
  for (const auto& arg : module_args) {
    std::string text = arg;
    std::replace(text.begin(), text.end(), ',', ' ');
    std::stringstream ss(text);
    std::string m;
    while (ss >> m) {
      if (std::find(s.modules.begin(), s.modules.end(), m) != s.modules.end()) continue;
      auto so = find_library(fmt::format("libeztrace-{}.so", m));
      if (!so) {
        fail("EZTrace module '{}' does not exist; available: {}", m,
             fmt::join(available_modules(), ", "));
      }
      s.modules.push_back(m);
      preload.push_back(so->string());
    }
  }
  auto has = [&](const char* m) {
    return std::find(s.modules.begin(), s.modules.end(), m) != s.modules.end();
  };
  if (has("posixio") && has("pthread")) {
    // Measured with EZTrace 2.0: pthread's mutex wrappers re-enter EZTrace's OTF2 lock while
    // posixio registers its strings in the constructor, and the program hangs before main.
    fail(
        "EZTrace 2.0 deadlocks at start-up when the posixio and pthread modules are loaded "
        "together; trace with one of them");
  }
  // The helper goes last: its constructor then runs before EZTrace's (see eziotrace_preload.c).
  preload.push_back(preload_helper_path().string());
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload.emplace_back(old);

  s.trace_dir = work_dir / "eztrace";
  s.sidecar_dir = work_dir / "eziotrace-alignment";
  std::error_code ec;
  std::filesystem::create_directories(s.trace_dir, ec);
  if (!ec) std::filesystem::create_directories(s.sidecar_dir, ec);
  if (ec) fail("cannot create {}: {}", work_dir.string(), ec.message());
  s.env = {fmt::format("LD_PRELOAD={}", fmt::join(preload, ":")),
           fmt::format("EZTRACE_TRACE={}", fmt::join(s.modules, " ")),
           fmt::format("EZTRACE_TRACE_DIR={}", s.trace_dir.string()),
           fmt::format("EZIOTRACE_SIDECAR_DIR={}", s.sidecar_dir.string())};
  return s;
}

MergeSummary finish_eztrace(const EztraceSetup& setup, const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir) {
  MergeSummary s;
  std::vector<std::string> warnings;
  auto inputs = load_eztrace_inputs(setup.sidecar_dir, {setup.trace_dir}, warnings);
  if (inputs.empty()) {
    fail(
        "no EZTrace archive to merge: the traced command wrote no alignment file in {} "
        "(did it run, and exit normally?)",
        setup.sidecar_dir.string());
  }
  Archive kernel = read_archive(kernel_anchor);
  s.report = merge_archives(inputs, kernel, out_dir, {setup.sidecar_dir, setup.trace_dir});
  s.report.warnings.insert(s.report.warnings.begin(), warnings.begin(), warnings.end());
  s.anchor = out_dir / "eziotrace.otf2";
  log_report(s.report, s.anchor);
  return s;
}

MergeSummary merge_recorded(const std::filesystem::path& eztrace,
                            const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            const std::filesystem::path& sidecar_dir) {
  // Accept the anchor, the <prog>_trace directory, or the directory holding them.
  std::filesystem::path base = std::filesystem::absolute(eztrace);
  if (base.extension() == ".otf2") base = base.parent_path();
  if (base.filename().string().ends_with("_trace")) base = base.parent_path();
  EztraceSetup setup;
  setup.trace_dir = base;
  setup.sidecar_dir = sidecar_dir.empty() ? base / "eziotrace-alignment" : sidecar_dir;
  if (!std::filesystem::is_directory(setup.sidecar_dir)) {
    fail(
        "no alignment data for {}: {} does not exist. The merge needs each process's EZTrace "
        "first_timestamp and thread table, written by the preload helper during the run "
        "(eziotrace -- cmd does it; or LD_PRELOAD libeziotrace-preload.so with "
        "EZIOTRACE_SIDECAR_DIR set) — give their directory with --alignment",
        eztrace.string(), setup.sidecar_dir.string());
  }
  return finish_eztrace(setup, kernel_anchor, out_dir);
}

}  // namespace ezio::converters
