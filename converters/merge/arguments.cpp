// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/arguments.h"

#include <algorithm>

#include "common/error.h"
#include "common/otf2/anchor.h"
#include "common/otf2/reader.h"
#include "common/schema/files.h"
#include "common/schema/properties.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

constexpr const char* kEztraceAnchor = "eztrace_log.otf2";

bool has_property_prefix(const Definitions& d, std::string_view prefix) {
  return std::any_of(d.node_properties.begin(), d.node_properties.end(),
                     [&](const auto& p) { return d.str(p.name).starts_with(prefix); });
}

bool has_property(const Definitions& d, std::string_view name) {
  return std::any_of(d.node_properties.begin(), d.node_properties.end(),
                     [&](const auto& p) { return d.str(p.name) == name; });
}

// The kernel archive's global definitions.
Definitions kernel_definitions(const fs::path& anchor, const fs::path& arg) {
  try {
    return otf2::ArchiveReader(anchor).defs();
  } catch (const Error& e) {
    fail("KERNEL_ARCHIVE {} is not a readable archive: {}", arg.string(), e.what());
  }
}

// An EZTrace anchor: OTF2, and not one of eziotrace's own archives. An archive whose anchor opens
// but whose definitions cannot be read is a broken EZTrace trace, and so is, in a directory given,
// any eztrace_log.otf2 that cannot be read: the merge goes on without it and says why
// (UnreadableTrace). A single file given that is not OTF2 at all is the wrong argument.
void check_eztrace_anchor(const fs::path& anchor, bool single) {
  std::error_code ec;
  if (fs::is_regular_file(anchor, ec) && fs::file_size(anchor, ec) == 0) {
    if (!single) return;
    fail("EZTRACE_ARCHIVE {} is an empty file, not an EZTrace archive", anchor.string());
  }
  Definitions defs;
  try {
    defs = otf2::ArchiveReader(anchor).defs();
  } catch (const Error& e) {
    if (!single || otf2::anchor_parses(anchor)) return;
    fail("EZTRACE_ARCHIVE {} is not a readable EZTrace archive: {}", anchor.string(), e.what());
  }
  if (has_property_prefix(defs, schema::kPropertyPrefix)) {
    fail_with(2,
              "EZTRACE_ARCHIVE {} is an archive eziotrace wrote, not EZTrace's: give EZTrace's "
              "trace (<prog>_trace or its eztrace_log.otf2) first, the kernel archive second",
              anchor.string());
  }
}

// The <prog>_trace/eztrace_log.otf2 files below dir, one and two levels down.
std::vector<fs::path> anchors_below(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory(ec)) continue;
    if (fs::exists(e.path() / kEztraceAnchor, ec)) {
      out.push_back(e.path() / kEztraceAnchor);
      continue;
    }
    for (const auto& f : fs::directory_iterator(e.path(), ec)) {
      if (f.is_directory(ec) && fs::exists(f.path() / kEztraceAnchor, ec)) {
        out.push_back(f.path() / kEztraceAnchor);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// True when `tail` (relative) is the end of `path`, component by component.
bool ends_with(const fs::path& path, const fs::path& tail) {
  std::vector<fs::path> p(path.begin(), path.end()), t(tail.begin(), tail.end());
  return t.size() <= p.size() && std::equal(t.rbegin(), t.rend(), p.rbegin());
}

}  // namespace

GivenEztrace given_eztrace(const fs::path& arg, const fs::path& kernel_anchor) {
  GivenEztrace g;
  g.root = fs::absolute(arg).lexically_normal();
  std::error_code ec;
  if (!fs::exists(g.root, ec)) {
    fail("EZTRACE_ARCHIVE {}: no such file or directory", arg.string());
  }
  if (fs::equivalent(g.root, kernel_anchor, ec) ||
      fs::equivalent(g.root, kernel_anchor.parent_path(), ec)) {
    fail_with(2,
              "EZTRACE_ARCHIVE and KERNEL_ARCHIVE are the same archive ({}): give EZTrace's "
              "trace first, the kernel archive second",
              arg.string());
  }
  if (!fs::is_directory(g.root, ec)) {
    g.anchors = {g.root};
    g.single = true;
  } else if (fs::exists(g.root / kEztraceAnchor, ec)) {
    g.anchors = {g.root / kEztraceAnchor};
    g.single = true;
  } else if (fs::exists(g.root / schema::kAnchorFile, ec)) {
    fail_with(2,
              "EZTRACE_ARCHIVE {} is an archive eziotrace wrote, not EZTrace's: give EZTrace's "
              "trace (<prog>_trace or its eztrace_log.otf2) first, the kernel archive second",
              arg.string());
  } else {
    g.anchors = anchors_below(g.root);
    if (g.anchors.empty()) {
      fail(
          "EZTRACE_ARCHIVE {} holds no EZTrace trace: no eztrace_log.otf2 in it, nor in a "
          "<prog>_trace directory below it",
          arg.string());
    }
  }
  for (const auto& a : g.anchors) check_eztrace_anchor(a, g.single);
  return g;
}

fs::path given_kernel(const fs::path& arg) {
  fs::path anchor = fs::absolute(arg).lexically_normal();
  std::error_code ec;
  if (!fs::exists(anchor, ec)) fail("KERNEL_ARCHIVE {}: no such file or directory", arg.string());
  if (fs::is_directory(anchor, ec)) anchor /= schema::kAnchorFile;
  if (!fs::exists(anchor, ec)) {
    fail("KERNEL_ARCHIVE {} holds no eziotrace archive (no eziotrace.otf2)", arg.string());
  }
  Definitions defs = kernel_definitions(anchor, arg);
  if (!has_property(defs, schema::kRecordVersion)) {
    fail_with(2, "KERNEL_ARCHIVE {} is not a kernel archive of `eziotrace record`", arg.string());
  }
  if (has_property(defs, schema::kEztraceProcesses)) {
    fail_with(2, "KERNEL_ARCHIVE {} is already a merged archive", arg.string());
  }
  return anchor;
}

ArchiveCandidates candidates_in(const GivenEztrace& given) {
  return [given](const Sidecar& s) {
    std::vector<fs::path> out;
    fs::path recorded = s.trace_dir() / kEztraceAnchor;
    for (const auto& a : given.anchors) {
      bool same_program = a.parent_path().filename() == s.program + "_trace";
      if (given.single ? same_program : ends_with(recorded, a.lexically_relative(given.root))) {
        out.push_back(a);
      }
    }
    return out;
  };
}

}  // namespace ezio::converters
