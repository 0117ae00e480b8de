#include "converters/eztrace_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "common/error.h"
#include "common/output_dir.h"
#include "common/program_path.h"
#include "common/schema/files.h"
#include "converters/merge_arguments.h"

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
  if (r.closes_without_syscall) {
    spdlog::warn(
        "{} close() call(s) on an fd EZTrace did not see opened made no system call: EZTrace "
        "2.0's wrapper skips them and the fd stays open "
        "(EZIOTRACE::EZTRACE_CLOSES_WITHOUT_SYSCALL)",
        r.closes_without_syscall);
  }
  if (r.processes == 0) {
    spdlog::warn(
        "EZTrace wrote no trace: the archive holds the kernel layers only, without user-level "
        "calls (EZIOTRACE::USER_LEVEL)");
  }
  if (!r.untraced.empty()) {
    spdlog::warn(
        "{} process(es) have kernel events but no user-level trace; their I/O is in the archive "
        "without EZTrace's calls (EZIOTRACE::PIDS_WITHOUT_USER_TRACE):",
        r.untraced.size());
    constexpr size_t kShown = 10;
    for (size_t i = 0; i < r.untraced.size() && i < kShown; ++i) {
      spdlog::warn("  {}", r.untraced[i]);
    }
    if (r.untraced.size() > kShown) spdlog::warn("  ... and {} more", r.untraced.size() - kShown);
  }
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
  s.sidecar_dir = work_dir / schema::kAlignmentDir;
  std::error_code ec;
  std::filesystem::create_directories(s.trace_dir, ec);
  if (!ec) std::filesystem::create_directories(s.sidecar_dir, ec);
  if (ec) fail("cannot create {}: {}", work_dir.string(), ec.message());
  s.env = {fmt::format("LD_PRELOAD={}", fmt::join(preload, ":")),
           fmt::format("EZTRACE_TRACE={}", fmt::join(s.modules, " ")),
           fmt::format("EZTRACE_TRACE_DIR={}", s.trace_dir.string()),
           fmt::format("EZIOTRACE_SIDECAR_DIR={}", s.sidecar_dir.string())};
  // One trace directory per process image (the helper makes it), so that processes of one
  // program do not overwrite each other's trace. Not for MPI: the ranks write one archive
  // together, into the directory each of them names.
  if (!has("mpich") && !has("openmpi")) {
    s.env.push_back(fmt::format("EZIOTRACE_TRACE_BASE={}", s.trace_dir.string()));
  }
  return s;
}

namespace {

// own: directories all of whose files are EZTrace's or the helper's (each process's
// <prog>_trace and the helper's directory are added). With no EZTrace archive at all the result is
// the kernel archive, rewritten without EZTrace's own work, saying that the user level is missing.
MergeSummary merge_from(const EztraceSetup& setup, const std::filesystem::path& kernel_anchor,
                        const std::filesystem::path& out_dir,
                        std::vector<std::filesystem::path> own, const ArchiveCandidates& candidates,
                        const char* given = nullptr) {
  MergeSummary s;
  std::vector<std::string> warnings;
  std::vector<Sidecar> images = read_sidecars(setup.sidecar_dir);
  auto inputs = load_eztrace_inputs(images, candidates, warnings);
  if (given && inputs.empty()) {
    for (const auto& w : warnings) spdlog::warn("{}", w);
    fail("EZTRACE_ARCHIVE {} holds the trace of no process of this recording (alignment data: {})",
         given, setup.sidecar_dir.string());
  }
  // The helper's files were written where the recording put them, maybe not where they are now.
  own.push_back(setup.sidecar_dir);
  for (const auto& image : images) {
    if (!image.sidecar_dir.empty()) own.push_back(image.sidecar_dir);
  }
  s.report = merge_archives(inputs, kernel_anchor, out_dir, own, images);
  s.report.warnings.insert(s.report.warnings.begin(), warnings.begin(), warnings.end());
  s.anchor = out_dir / schema::kAnchorFile;
  log_report(s.report, s.anchor);
  return s;
}

}  // namespace

MergeSummary finish_eztrace(const EztraceSetup& setup, const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir) {
  // EZTRACE_TRACE_DIR is private to the run: everything in it is EZTrace's.
  return merge_from(setup, kernel_anchor, out_dir, {setup.trace_dir}, [](const Sidecar& s) {
    return std::vector{s.trace_dir() / "eztrace_log.otf2"};
  });
}

namespace {

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
  std::optional<std::string> out;
  for (const auto& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      out = e.substr(name.size() + 1);
    }
  }
  return out;
}

void set_env(std::vector<std::string>& env, std::string_view name, const std::string& value) {
  std::erase_if(env, [&](const std::string& e) {
    return e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=';
  });
  env.push_back(fmt::format("{}={}", name, value));
}

// The program a command runs, as the kernel will exec it (PATH searched, symlinks followed).
std::filesystem::path resolved_program(const std::string& word,
                                       const std::vector<std::string>& env) {
  return find_program(word, env_value(env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
}

}  // namespace

std::vector<std::string> eztrace_command(const EztraceSetup& setup,
                                         const std::vector<std::string>& command,
                                         std::vector<std::string>& env) {
  if (command.empty() ||
      !resolved_program(command.front(), env).filename().string().starts_with("mpiexec.hydra")) {
    for (const auto& e : setup.env)
      set_env(env, e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
    return command;
  }
  // Global options go first: `mpiexec -genv N V ... -np 2 prog`. The launcher keeps the other
  // settings too: they say that this run collects its alignment data itself.
  std::vector<std::string> out = {command.front()};
  for (const auto& e : setup.env) {
    std::string name = e.substr(0, e.find('=')), value = e.substr(e.find('=') + 1);
    out.insert(out.end(), {"-genv", name, value});
    if (name != "LD_PRELOAD") set_env(env, name, value);
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

bool runs_eztrace(const std::vector<std::string>& command, const std::vector<std::string>& env) {
  for (const auto& word : command) {
    if (std::filesystem::path(word).filename() == "eztrace") return true;
  }
  return env_value(env, "LD_PRELOAD").value_or("").find("libeztrace") != std::string::npos;
}

AlignmentCapture::AlignmentCapture(const std::filesystem::path& out, std::vector<std::string>& env,
                                   bool force)
    : dir_(std::filesystem::path(out) += ".alignment", DirKind::work, force) {
  // After EZTrace's libraries, whatever put them there (the eztrace launcher prepends its own).
  std::string preload = env_value(env, "LD_PRELOAD").value_or("");
  preload += (preload.empty() ? "" : ":") + preload_helper_path().string();
  set_env(env, "LD_PRELOAD", preload);
  set_env(env, "EZIOTRACE_SIDECAR_DIR", dir_.dir().string());
}

size_t AlignmentCapture::store_into(const std::filesystem::path& archive_dir) {
  std::filesystem::path to = archive_dir / kAlignmentDirName;
  dir_.move_into(to);
  std::error_code ec;
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(to, ec))
    n += e.path().extension() == ".json";
  return n;
}

MergeSummary merge_recorded(const std::filesystem::path& eztrace,
                            const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            const std::filesystem::path& sidecar_dir) {
  std::filesystem::path kernel = given_kernel(kernel_anchor);
  // The EZTrace directory: the argument, or the one holding the <prog>_trace it names.
  std::filesystem::path base = std::filesystem::absolute(eztrace);
  if (base.extension() == ".otf2") base = base.parent_path();
  if (base.filename().string().ends_with("_trace")) base = base.parent_path();
  EztraceSetup setup;
  if (!sidecar_dir.empty()) {
    setup.sidecar_dir = sidecar_dir;
    if (!std::filesystem::is_directory(setup.sidecar_dir)) {
      fail("--alignment {}: no such directory", sidecar_dir.string());
    }
  } else {
    std::filesystem::path in_kernel = kernel.parent_path() / kAlignmentDirName;
    std::filesystem::path beside = base / kAlignmentDirName;
    if (std::filesystem::is_directory(in_kernel)) {
      setup.sidecar_dir = in_kernel;
    } else if (std::filesystem::is_directory(beside)) {
      setup.sidecar_dir = beside;
    } else {
      fail(
          "no alignment data: the kernel archive carries none ({} does not exist) and neither "
          "does the EZTrace directory ({}). The merge needs each process's EZTrace "
          "first_timestamp and thread table, written at run time by the preload helper: record "
          "with `eziotrace record -- eztrace -t MODULES prog` (or `eziotrace -- prog`), or "
          "preload libeziotrace-preload.so with EZIOTRACE_SIDECAR_DIR set and give that "
          "directory with --alignment",
          in_kernel.string(), beside.string());
    }
  }
  GivenEztrace given = given_eztrace(eztrace, kernel);
  // Only the archives given are merged, wherever the recording put them; the EZTrace directory
  // may hold the application's files, which are not filtered.
  std::vector<std::filesystem::path> own;
  for (const auto& a : given.anchors) own.push_back(a.parent_path());
  return merge_from(setup, kernel, out_dir, own, candidates_in(given), eztrace.c_str());
}

}  // namespace ezio::converters
