// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/run_merge.h"

#include <spdlog/spdlog.h>

#include "common/error.h"
#include "common/schema/files.h"
#include "converters/eztrace/alignment_capture.h"
#include "converters/eztrace/module_use.h"
#include "converters/merge/arguments.h"

namespace ezio::converters {
namespace {

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
        "{}: the archive holds the kernel layers only, without user-level calls "
        "(EZIOTRACE::USER_LEVEL)",
        r.unreadable_traces ? "EZTrace's trace cannot be read" : "EZTrace wrote no trace");
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
  if (r.unverifiable_calls) {
    spdlog::warn(
        "{} user call(s) contain no system call, but the kernel lost {} system-call events: they "
        "may be among the lost, so they are neither checked nor counted as violations "
        "(EZIOTRACE::ALIGNMENT_UNVERIFIABLE)",
        r.unverifiable_calls, r.syscalls_lost);
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
  spdlog::debug(
      "merged archive written to {}; the kernel events {}; the event stores took {} bytes ({:.1f} "
      "per event)",
      anchor.string(),
      r.kernel_events_recorded ? "taken from the recorder's copy" : "decoded from its archive",
      r.store_bytes,
      double(r.store_bytes) / double(std::max<uint64_t>(1, r.user_events + r.kernel_events)));
}

// What a merge takes from a recording, wherever it was recorded.
struct MergeSources {
  std::filesystem::path sidecar_dir;  // the helper's alignment data
  // Directories all of whose files are EZTrace's or the helper's (each process's <prog>_trace and
  // the helper's directory are added).
  std::vector<std::filesystem::path> own;
  ArchiveCandidates candidates;  // where each image's EZTrace archive may be
  const char* given = nullptr;   // `eziotrace merge`'s EZTRACE_ARCHIVE: it must hold a trace
  std::set<OTF2_LocationRef> elsewhere;  // EZTrace locations of other parts' ranks
};

// With no EZTrace archive at all the result is the kernel archive, rewritten without EZTrace's own
// work, saying that the user level is missing.
MergeSummary merge_from(MergeSources sources, const std::filesystem::path& kernel_anchor,
                        const std::filesystem::path& out_dir,
                        std::unique_ptr<EventStore> kernel_events = nullptr) {
  const char* given = sources.given;
  std::vector<std::filesystem::path>& own = sources.own;
  MergeSummary s;
  std::vector<std::string> warnings;
  std::vector<Sidecar> images = read_sidecars(sources.sidecar_dir);
  // The helper's files were written where the recording put them, maybe not where they are now.
  own.push_back(sources.sidecar_dir);
  for (const auto& image : images) {
    if (!image.sidecar_dir.empty()) own.push_back(image.sidecar_dir);
  }
  auto load = [&] {
    // The merge's temporary files go next to its output, on its file system.
    auto inputs =
        load_eztrace_inputs(images, sources.candidates, warnings,
                            std::filesystem::absolute(out_dir).parent_path(), sources.elsewhere);
    // An archive given that cannot be read is the trace of its processes all the same.
    if (given && inputs.traces.empty() && inputs.unreadable.empty()) {
      for (const auto& w : warnings) spdlog::warn("{}", w);
      fail(
          "EZTRACE_ARCHIVE {} holds the trace of no process of this recording (alignment data: "
          "{})",
          given, sources.sidecar_dir.string());
    }
    return inputs;
  };
  s.report = merge_archives(load, kernel_anchor, out_dir, own, images, std::move(kernel_events));
  s.report.warnings.insert(s.report.warnings.begin(), warnings.begin(), warnings.end());
  s.anchor = out_dir / schema::kAnchorFile;
  log_report(s.report, s.anchor);
  return s;
}

}  // namespace

MergeSummary finish_eztrace(const EztraceSetup& setup, const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            std::unique_ptr<EventStore> kernel_events) {
  warn_unused_modules(setup.modules, setup.sidecar_dir);
  // EZTRACE_TRACE_DIR is private to the run: everything in it is EZTrace's.
  MergeSources sources{
      setup.sidecar_dir,
      {setup.trace_dir},
      [](const Sidecar& s) { return std::vector{s.trace_dir() / "eztrace_log.otf2"}; },
      nullptr,
      {}};
  return merge_from(std::move(sources), kernel_anchor, out_dir, std::move(kernel_events));
}

MergeSummary merge_recorded(const std::filesystem::path& eztrace,
                            const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            const std::filesystem::path& sidecar_dir,
                            const std::set<OTF2_LocationRef>& elsewhere) {
  std::filesystem::path kernel = given_kernel(kernel_anchor);
  // The EZTrace directory: the argument, or the one holding the <prog>_trace it names.
  std::filesystem::path base = std::filesystem::absolute(eztrace);
  if (base.extension() == ".otf2") base = base.parent_path();
  if (base.filename().string().ends_with("_trace")) base = base.parent_path();
  MergeSources sources;
  if (!sidecar_dir.empty()) {
    sources.sidecar_dir = sidecar_dir;
    if (!std::filesystem::is_directory(sources.sidecar_dir)) {
      fail("--alignment {}: no such directory", sidecar_dir.string());
    }
  } else {
    std::filesystem::path in_kernel = kernel.parent_path() / kAlignmentDirName;
    std::filesystem::path beside = base / kAlignmentDirName;
    if (std::filesystem::is_directory(in_kernel)) {
      sources.sidecar_dir = in_kernel;
    } else if (std::filesystem::is_directory(beside)) {
      sources.sidecar_dir = beside;
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
  for (const auto& a : given.anchors) sources.own.push_back(a.parent_path());
  sources.candidates = candidates_in(given);
  sources.given = eztrace.c_str();
  sources.elsewhere = elsewhere;
  return merge_from(std::move(sources), kernel, out_dir);
}

}  // namespace ezio::converters
