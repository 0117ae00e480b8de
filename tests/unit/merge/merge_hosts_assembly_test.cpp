// SPDX-License-Identifier: GPL-2.0-only
// merge-hosts' assembly (docs/cluster.md, "Assembly where the parts were recorded"): the parts'
// event files linked into the job archive as they are, their ids and clocks mapped by OTF2
// mapping tables and clock offsets. The same parts merged both ways read the same: events,
// definitions, corrected timestamps, through our reader, otf2-print, the analyzers and exports.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/otf2/reader.h"
#include "converters/hosts/merge_hosts.h"
#include "run.h"
#include "synthetic.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;
using converters::merge_hosts;

// testhost, the reference, and nodeB: 7 s behind it and gaining 1000 ppm (as merge_hosts_test's).
struct Parts {
  fs::path root = test::scratch_dir("merge_hosts_assembly");
  fs::path a = root / "a", b = root / "b";
  explicit Parts(const std::string& b_status = "complete") {
    fs::create_directories(a);
    fs::create_directories(b);
    test::write_basic_archive(a);
    test::write_basic_archive(b, b_status, b_status == "complete" ? "" : "eziotraced went away");
    std::ofstream(b / "eziotrace-clock.json")
        << R"({"reference":"testhost","host":"nodeB",)"
           R"("start":{"offset_ns":7000000000,"error_ns":250000,"at_ns":500000,"rounds":200},)"
           R"("end":{"offset_ns":7000002000,"error_ns":300000,"at_ns":2000000,"rounds":200}})";
  }
};

std::string value_text(const otf2::Definitions& d, OTF2_Type type, OTF2_AttributeValue v) {
  switch (type) {
    case OTF2_TYPE_STRING:
      return d.str(v.stringRef);
    case OTF2_TYPE_IO_HANDLE:
      return d.io_handles.count(v.ioHandleRef) ? d.str(d.io_handles.at(v.ioHandleRef).name) : "?";
    case OTF2_TYPE_REGION:
      return d.regions.count(v.regionRef) ? d.str(d.regions.at(v.regionRef).name) : "?";
    default:
      return std::to_string(v.uint64);
  }
}

// An event with its references resolved to what they name: what must not depend on how the part
// got into the archive.
std::string describe(const otf2::Definitions& d, const otf2::Event& e) {
  std::ostringstream s;
  s << otf2::event_kind_name(e.kind) << " t=" << e.time << " a=" << e.a << " b=" << e.b
    << " f=" << e.f1 << "," << e.f2 << "," << e.f3;
  if (e.kind == otf2::EventKind::Enter || e.kind == otf2::EventKind::Leave) {
    s << " region=" << d.str(d.regions.at(e.ref).name);
  } else if (e.kind == otf2::EventKind::IoDeleteFile) {
    s << " file=" << d.str(d.io_files.at(e.ref2).name);
  } else if (otf2::is_io_event(e.kind)) {
    const otf2::IoHandleDef& h = d.io_handles.at(e.ref);
    s << " handle=" << d.str(h.name) << " file=" << d.str(d.io_files.at(h.file).name);
  } else if (e.kind == otf2::EventKind::Metric) {
    for (otf2::Ref m : d.metric_classes.at(e.ref).members) {
      s << " metric=" << d.str(d.metric_members.at(m).name);
    }
  }
  for (const otf2::Attribute& at : e.attributes) {
    s << " " << d.str(d.attributes.at(at.id).name) << "=" << value_text(d, at.type, at.value);
  }
  return s.str();
}

// Locations (with their group and host), properties and events, by what they name.
std::map<std::string, std::vector<std::string>> content(const fs::path& anchor) {
  otf2::Archive x = otf2::read_archive(anchor);
  const otf2::Definitions& d = x.defs;
  std::map<std::string, std::vector<std::string>> c;
  c["clock"] = {std::to_string(d.global_offset), std::to_string(d.trace_length),
                std::to_string(d.realtime)};
  for (const auto& [id, l] : d.locations) {
    const otf2::LocationGroupDef& g = d.location_groups.at(l.group);
    c["locations"].push_back(std::to_string(id) + " " + d.str(l.name) + " in " + d.str(g.name) +
                             " on " + d.str(d.nodes.at(g.node).name) + " events " +
                             std::to_string(l.events));
    for (const otf2::Event& e : x.events[id]) c[std::to_string(id)].push_back(describe(d, e));
  }
  for (const auto& p : d.node_properties) {
    c["node properties"].push_back(d.str(d.nodes.at(p.owner).name) + " " + d.str(p.name) + "=" +
                                   value_text(d, p.type, p.value));
  }
  for (const auto& p : d.location_properties) {
    c["location properties"].push_back(std::to_string(p.location) + " " + d.str(p.name) + "=" +
                                       std::to_string(p.value.uint64));
  }
  return c;
}

// otf2-print's event lines with the definitions' ids (<n>) left out: they are numbered apart.
std::string otf2_print_events(const fs::path& anchor) {
  const fs::path out = anchor.parent_path() / "otf2-print.txt";
  const std::string cmd = "otf2-print " + anchor.string() + " > " + out.string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << test::read_text(out);
  static const std::regex id(R"( <\d+>)");
  std::istringstream in(test::read_text(out));
  std::string line, events;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isupper(static_cast<unsigned char>(line[0]))) {
      events += std::regex_replace(line, id, "") + "\n";
    }
  }
  return events;
}

// A tool's output with the archive's path left out (each output names its own).
std::string without(std::string text, const std::string& path) {
  for (size_t at; (at = text.find(path)) != std::string::npos;) text.replace(at, path.size(), "A");
  return text;
}

// A Pajé file with its region aliases (r<id>: numbered as the archive numbers its regions)
// replaced by the names they define, its lines sorted (the definitions come in id order).
std::string paje_by_name(const std::string& text) {
  static const std::regex def(R"re(^5 (r\d+) ST_Call "([^"]+)")re"), alias(R"re(\br\d+\b)re");
  std::map<std::string, std::string> names;
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, def)) names[m[1]] = m[2];
    lines.push_back(line);
  }
  for (std::string& line : lines) {
    std::string out;
    auto end = std::sregex_iterator();
    size_t last = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), alias); it != end; ++it) {
      out += line.substr(last, it->position()) +
             (names.count(it->str()) ? names[it->str()] : it->str());
      last = it->position() + it->length();
    }
    line = out + line.substr(last);
  }
  std::sort(lines.begin(), lines.end());
  std::string joined;
  for (const std::string& line : lines) joined += line + "\n";
  return joined;
}

TEST(MergeHostsAssembly, ReadsAsTheFullMergeWrites) {
  Parts parts;
  const fs::path assembled = parts.root / "assembled", rewritten = parts.root / "rewritten";
  auto ra = merge_hosts({parts.a, parts.b}, assembled);
  auto rr = merge_hosts({parts.a, parts.b}, rewritten, {}, "", true);
  EXPECT_EQ(ra.assembled, 2u);
  EXPECT_EQ(ra.rewritten, 0u);
  EXPECT_EQ(rr.rewritten, 2u);
  EXPECT_EQ(ra.events, rr.events);
  EXPECT_EQ(ra.status, "complete");
  const auto a = content(assembled / "eziotrace.otf2"), r = content(rewritten / "eziotrace.otf2");
  ASSERT_EQ(a.size(), r.size());
  for (const auto& [what, lines] : r) EXPECT_EQ(a.at(what), lines) << what;
  EXPECT_GT(r.at("locations").size(), 4u);

  // The assembled archive's event files are the parts' own (hard links), never rewritten.
  struct stat part {
  }, job{};
  ASSERT_EQ(::stat((parts.b / "eziotrace" / "101.evt").c_str(), &part), 0);
  ASSERT_EQ(::stat((assembled / "eziotrace" / "17592186044517.evt").c_str(), &job), 0);
  EXPECT_EQ(part.st_ino, job.st_ino);
}

TEST(MergeHostsAssembly, ToolsAnswerTheSameOnBoth) {
  Parts parts;
  const fs::path assembled = parts.root / "cli-a", rewritten = parts.root / "cli-r";
  test::Run ma = test::eziotrace({"merge-hosts", "-v", parts.a, parts.b, "-o", assembled});
  test::Run mr =
      test::eziotrace({"merge-hosts", "--rewrite-events", parts.a, parts.b, "-o", rewritten});
  ASSERT_EQ(ma.status, 0) << ma.err;
  ASSERT_EQ(mr.status, 0) << mr.err;
  EXPECT_NE(ma.err.find("assembled: its event files linked"), std::string::npos) << ma.err;
  const fs::path aa = assembled / "eziotrace.otf2", ar = rewritten / "eziotrace.otf2";
  EXPECT_EQ(otf2_print_events(aa), otf2_print_events(ar));
  EXPECT_EQ(test::dump_archive(aa), test::dump_archive(ar));
  for (std::vector<std::string> args : {std::vector<std::string>{"check"},
                                        {"layers", "--json"},
                                        {"layers", "--by-host", "--json"},
                                        {"profile", "--json"},
                                        {"files", "--json"},
                                        {"latency", "--json"}}) {
    std::vector<std::string> on_a = args, on_r = args;
    on_a.push_back(aa.string());
    on_r.push_back(ar.string());
    test::Run xa = test::eziotrace(on_a), xr = test::eziotrace(on_r);
    EXPECT_EQ(xa.status, xr.status) << args[0] << ": " << xa.err;
    EXPECT_EQ(without(xa.out, aa.string()), without(xr.out, ar.string())) << args[0];
  }
  for (const char* format : {"paje", "perfetto"}) {
    const fs::path ta = parts.root / (std::string("a.") + format),
                   tr = parts.root / (std::string("r.") + format);
    ASSERT_EQ(test::eziotrace({"export", aa, "--format", format, "-o", ta}).status, 0);
    ASSERT_EQ(test::eziotrace({"export", ar, "--format", format, "-o", tr}).status, 0);
    std::string ea = without(test::read_text(ta), aa.string()),
                er = without(test::read_text(tr), ar.string());
    if (std::string(format) == "paje") ea = paje_by_name(ea), er = paje_by_name(er);
    EXPECT_EQ(ea, er) << format;
  }
}

// A part whose recording is not whole has its events rewritten (its event files may end in a torn
// chunk), the others are assembled; the archive says it is partial, as before.
TEST(MergeHostsAssembly, AnIncompletePartIsRewrittenTheRestAssembled) {
  Parts parts("interrupted");
  const fs::path out = parts.root / "mixed";
  test::Run r = test::eziotrace({"merge-hosts", "-v", "--no-check", parts.a, parts.b, "-o", out});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.err.find("nodeB (" + parts.b.string() +
                       "): events read and rewritten: its recording is not whole"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1 part(s) assembled, 1 rewritten"), std::string::npos) << r.err;
  const fs::path full = parts.root / "full";
  merge_hosts({parts.a, parts.b}, full, {}, "", true);
  const auto m = content(out / "eziotrace.otf2"), f = content(full / "eziotrace.otf2");
  for (const auto& [what, lines] : f) EXPECT_EQ(m.at(what), lines) << what;
}

// An output on another file system than the parts (here /dev/shm, a tmpfs) cannot take their
// event files by hard link: every part is rewritten, the archive the same.
TEST(MergeHostsAssembly, PartsOnAnotherFileSystemAreRewritten) {
  Parts parts;
  struct stat scratch {
  }, shm{};
  ASSERT_EQ(::stat(parts.root.c_str(), &scratch), 0);
  ASSERT_EQ(::stat("/dev/shm", &shm), 0) << "this test needs /dev/shm";
  ASSERT_NE(scratch.st_dev, shm.st_dev) << "the build tree is on /dev/shm's file system";
  char tmpl[] = "/dev/shm/ezio-assembly-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path elsewhere = fs::path(tmpl) / "out";
  auto report = merge_hosts({parts.a, parts.b}, elsewhere);
  EXPECT_EQ(report.assembled, 0u);
  EXPECT_EQ(report.rewritten, 2u);
  const fs::path full = parts.root / "full";
  merge_hosts({parts.a, parts.b}, full, {}, "", true);
  const auto e = content(elsewhere / "eziotrace.otf2"), f = content(full / "eziotrace.otf2");
  fs::remove_all(tmpl);
  for (const auto& [what, lines] : f) EXPECT_EQ(e.at(what), lines) << what;
}

// An assembled archive given as a part: its events mean what its own mapping tables and clock
// offsets say, which a location's new local definitions would replace: it is rewritten, its
// events read through them.
TEST(MergeHostsAssembly, AnAssembledArchiveAsAPartIsRewritten) {
  Parts parts;
  const fs::path job = parts.root / "job", again = parts.root / "again";
  merge_hosts({parts.a, parts.b}, job);
  std::ofstream(job / "eziotrace-clock.json")
      << R"({"reference":"elsewhere","host":"nodeX","start":{"offset_ns":0,"error_ns":1,)"
         R"("at_ns":0,"rounds":1},"end":null})";
  auto report = merge_hosts({job}, again);
  EXPECT_EQ(report.assembled, 0u);
  EXPECT_EQ(report.rewritten, 1u);
  const auto j = content(job / "eziotrace.otf2"), g = content(again / "eziotrace.otf2");
  EXPECT_EQ(g.at("locations").size(), j.at("locations").size());
  for (const auto& [what, lines] : j) {
    if (what.find_first_not_of("0123456789") == std::string::npos) {
      EXPECT_EQ(g.at(what), lines) << "location " << what;
    }
  }
}

}  // namespace
}  // namespace ezio
