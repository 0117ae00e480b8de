// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace export` and `eziotrace view`: the layered timeline as a Pajé trace (ViTE) or as
// Chrome Trace Event JSON (Perfetto), and ViTE started on a Pajé conversion.
#include "converters/timeline/export_command.h"

#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/command.h"
#include "common/error.h"
#include "common/program_path.h"
#include "converters/timeline/paje.h"
#include "converters/timeline/perfetto.h"

extern char** environ;

namespace ezio::converters {
namespace {

double parse_seconds(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  fail("--window: {} '{}' is not a number of seconds", what, s);
}

TimelineOptions timeline_options(const ExportOptions& o) {
  TimelineOptions t;
  if (o.tid) t.tid = o.tid;
  if (!o.layers.empty()) {
    t.layers.reset();
    std::string rest = o.layers;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string name = rest.substr(0, comma);
      auto layer = analysis::parse_layer(name);
      if (!layer)
        fail("--layers: unknown layer '{}' (hdf5, mpiio, user, syscall, vfs, fs, pagecache, block)",
             name);
      t.layers.set(static_cast<size_t>(*layer));
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
  }
  return t;
}

// --window T0:T1, seconds from the start of the recording, checked against its length.
void apply_window(Timeline& t, const std::string& window, TimelineOptions& options) {
  if (window.empty()) return;
  size_t colon = window.find(':');
  if (colon == std::string::npos)
    fail("--window takes T0:T1 (seconds from the start), not '{}'", window);
  double t0 = parse_seconds(window.substr(0, colon), "T0");
  double t1 = parse_seconds(window.substr(colon + 1), "T1");
  double length =
      static_cast<double>(t.defs().trace_length) / static_cast<double>(t.defs().resolution);
  if (t1 <= t0) fail("--window {}: T1 must be after T0", window);
  if (t0 >= length) {
    fail("--window {}: the recording is only {:.6f} s long; T0 must be below that", window, length);
  }
  auto ticks = [&](double s) {
    return t.begin() + static_cast<uint64_t>(s * static_cast<double>(t.defs().resolution));
  };
  options.window = std::pair{ticks(t0), std::min(ticks(t1), t.end())};
}

// Opens the archive with the options; refuses an export larger than a viewer can hold.
std::unique_ptr<Timeline> open_timeline(const ExportOptions& o) {
  TimelineOptions options = timeline_options(o);
  auto t = std::make_unique<Timeline>(o.trace, options);
  apply_window(*t, o.window, options);
  t->set_options(options);
  uint64_t events = t->estimated_events();
  if (o.max_events && events > o.max_events) {
    double length =
        static_cast<double>(t->defs().trace_length) / static_cast<double>(t->defs().resolution);
    double share = static_cast<double>(o.max_events) / static_cast<double>(events);
    fail(
        "{}: about {} events to draw, more than --max-events {}; a viewer would not hold them. "
        "Cut it with --window T0:T1 (e.g. --window 0:{:.3g} of {:.3g} s), --thread TID or "
        "--layers, "
        "or raise --max-events",
        o.trace, events, o.max_events, length * share, length);
  }
  return t;
}

}  // namespace

void export_command(const ExportOptions& o) {
  auto t = open_timeline(o);
  ExportCounts c;
  if (o.format == "paje") {
    c = export_paje(*t, o.out, o.force);
  } else {
    c = export_perfetto(*t, o.out, o.force);
  }
  spdlog::info("{}: {} calls, {} block requests, {} links", o.out, c.states, c.requests, c.links);
}

// Converts to a temporary Pajé file, runs ViTE on it and removes the file when ViTE exits.
void view_command(ExportOptions o) {
  const char* display = std::getenv("DISPLAY");
  if (!display || !*display) {
    fail(
        "no display (DISPLAY is not set): ViTE needs one. Export instead: eziotrace export "
        "--format paje {} -o trace.trace, and open it where there is a display",
        o.trace);
  }
  const char* path = std::getenv("PATH");
  if (find_program("vite", path ? path : "").empty())
    fail("ViTE is not installed (no 'vite' on PATH); on Debian: apt-get install vite");
  std::string dir_template =
      (std::filesystem::temp_directory_path() / "eziotrace-view.XXXXXX").string();
  if (!mkdtemp(dir_template.data()))
    fail("cannot create a temporary directory: {}", errno_text(errno));
  std::filesystem::path dir = dir_template;
  struct Cleanup {
    std::filesystem::path d;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  } cleanup{dir};
  o.out = (dir / "timeline.trace").string();
  export_command(o);
  std::string file = o.out;
  char* argv[] = {const_cast<char*>("vite"), file.data(), nullptr};
  pid_t pid;
  if (int err = posix_spawnp(&pid, "vite", nullptr, nullptr, argv, environ)) {
    fail("cannot start vite: {}", errno_text(err));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  command_status() = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace ezio::converters
