// SPDX-License-Identifier: GPL-2.0-only
// The HTML report as a person sees it: headless Chromium renders the report of the demo and of two
// advise workloads to PNG (kept under the build tree's scratch directory), loads it without a
// console error, shows every section, none of them cut off at 1400 pixels (a table wider than its
// card, or scrolled), and its funnel's numbers equal `eziotrace layers --json`.
// The MPI-IO and HDF5 sections (and tabs) appear only for a trace with such calls: the serial HDF5
// program's page has its datasets, with the figures of `eziotrace datasets`.
// The hosts section only for an archive of several hosts, one row per host.
// Bad input: a clear message, exit status < 128, no page left behind.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "common/schema/properties.h"
#include "recorded_suite.h"
#include "split_hosts.h"
#include "synthetic.h"

namespace fs = std::filesystem;
using ezio::test::run;

using nlohmann::json;

namespace {

constexpr const char* kSections[] = {"header",  "findings", "funnel",  "timeline",
                                     "latency", "files",    "devices", "threads"};

// Headless Chromium with a private profile; fails the test loudly when it is missing.
ezio::test::Run chromium(const std::vector<std::string>& args) {
  static const fs::path profile = ezio::test::scratch_dir("chromium-profile");
  std::vector<std::string> argv{"chromium",          "--headless",
                                "--no-sandbox",      "--disable-gpu",
                                "--hide-scrollbars", "--user-data-dir=" + profile.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ezio::test::Run r = run(argv);
  if (r.status == 127 || (r.status != 0 && r.err.find("No such file") != std::string::npos))
    throw std::runtime_error("chromium is not installed (scripts/setup.sh installs it)");
  return r;
}

// Console messages Chromium logs with --enable-logging=stderr: "...:CONSOLE(line)] ...".
std::vector<std::string> console_messages(const fs::path& page) {
  ezio::test::Run r =
      chromium({"--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + page.string()});
  std::vector<std::string> out;
  std::istringstream in(r.err);
  for (std::string l; std::getline(in, l);) {
    if (l.find("CONSOLE") != std::string::npos) out.push_back(l);
  }
  return out;
}

fs::path screenshot(const fs::path& page, const std::string& name) {
  // Kept after the test for a person to look at; one directory for all the pages.
  fs::path shots = fs::path(EZIO_TEST_SCRATCH_DIR) / "report-shots";
  fs::create_directories(shots);
  fs::path png = shots / (name + ".png");
  fs::remove(png);
  ezio::test::Run r = chromium(
      {"--screenshot=" + png.string(), "--window-size=1400,4200", "file://" + page.string()});
  EXPECT_TRUE(fs::exists(png)) << r.err;
  return png;
}

std::string dom(const fs::path& page) {
  ezio::test::Run r = chromium({"--dump-dom", "file://" + page.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// The funnel rows' values as the page holds them (data attributes and the visible cells): a
// number, or "not observed".
std::map<std::string, std::map<std::string, std::string>> funnel(const std::string& html) {
  std::map<std::string, std::map<std::string, std::string>> rows;
  static const std::string v = R"re((\d+|not observed))re";
  static const std::regex row(R"re(<tr data-layer="(\w+)" data-observed="true" data-reads=")re" +
                              v + R"re(" data-writes=")re" + v + R"re(" data-other=")re" + v +
                              R"re(" data-read-bytes=")re" + v + R"re(" data-write-bytes=")re" + v +
                              R"re("><td class="l"><b>[^<]*</b></td><td class="reads">)re" + v +
                              R"re(</td><td class="writes">)re" + v + "</td>");
  for (std::sregex_iterator it(html.begin(), html.end(), row), end; it != end; ++it) {
    auto& m = *it;
    rows[m[1]] = {{"reads", m[2]},       {"writes", m[3]},      {"other", m[4]},
                  {"read_bytes", m[5]},  {"write_bytes", m[6]}, {"reads_shown", m[7]},
                  {"writes_shown", m[8]}};
  }
  return rows;
}

// A value of `layers --json` as text: a number, or "not observed".
std::string json_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : std::to_string(v.get<uint64_t>());
}

// The ids of the page's sections whose content is wider than what a 1400-pixel window shows of
// them (a table poking out of its card, or scrolled so that its last columns are hidden), as
// Chromium lays the page out: a copy of the page measures itself.
std::vector<std::string> overflowing_sections(const fs::path& page) {
  const fs::path probe = page.parent_path() / "overflow-probe.html";
  std::string html = ezio::test::read_text(page);
  const size_t body = html.rfind("</body>");
  EXPECT_NE(body, std::string::npos);
  html.insert(body == std::string::npos ? html.size() : body,
              "<script>document.body.dataset.overflowing=[...document.querySelectorAll('section')]"
              ".filter(s=>[s,...s.querySelectorAll('div')].some(e=>e.scrollWidth>e.clientWidth))"
              ".map(s=>s.id).join(' ')</script>");
  std::ofstream(probe) << html;
  ezio::test::Run r =
      chromium({"--window-size=1400,4200", "--dump-dom", "file://" + probe.string()});
  static const std::regex attr(R"re(data-overflowing="([^"]*)")re");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.out, m, attr)) << "the probe did not run: " << r.err;
  std::vector<std::string> ids;
  std::istringstream in(m.size() > 1 ? m[1].str() : "");
  for (std::string id; in >> id;) ids.push_back(id);
  return ids;
}

// `hdf5`: the trace has HDF5 calls (the datasets tab and section); none has MPI-IO calls.
// several_hosts: it must have the hosts section, else it must not.
void check_page(const fs::path& trace, const std::string& name, bool hdf5 = false,
                bool several_hosts = false) {
  fs::path page = trace.parent_path() / "report.html";
  ezio::test::Run r = ezio::test::eziotrace({"report", "-f", "-o", page.string(), trace.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  fs::path png = screenshot(page, name);
  EXPECT_GT(fs::file_size(png), 50'000u) << "a nearly blank screenshot: " << png;
  EXPECT_TRUE(console_messages(page).empty()) << console_messages(page).front();
  for (const std::string& id : overflowing_sections(page)) ADD_FAILURE() << id << " is cut off";
  std::string html = dom(page);
  for (const char* id : kSections) {
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  }
  for (const std::string id : {"collective", "datasets"}) {
    bool shown = id == "datasets" && hdf5;
    EXPECT_EQ(html.find("<section id=\"" + id + "\"") != std::string::npos, shown) << id;
    EXPECT_EQ(html.find("href=\"#" + id + "\"") != std::string::npos, shown) << id;
  }
  EXPECT_EQ(html.find("<section id=\"hosts\"") != std::string::npos, several_hosts) << name;
  for (const char* fetch : {"src=\"http", "href=\"http", "url(http", "@import"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << "the page must not fetch anything: " << fetch;
  }
  ezio::test::Run layers = ezio::test::eziotrace({"layers", "--json", trace.string()});
  ASSERT_EQ(layers.status, 0) << layers.err;
  auto shown = funnel(html);
  size_t compared = 0;
  json table = json::parse(layers.out);
  for (auto& row : table["layers"]) {
    std::string key = row["layer"];
    // The report's keys: the layer's title in lower case without spaces or dashes (MPI-IO: mpiio).
    std::erase_if(key, [](char c) { return c == ' ' || c == '-'; });
    for (char& c : key) c = static_cast<char>(std::tolower(c));
    if (!shown.contains(key)) {
      // Only a layer the recording could not observe may be absent, and it says so.
      EXPECT_NE(html.find("data-layer=\"" + key + "\" data-observed=\"false\""), std::string::npos)
          << key;
      for (const char* k : {"reads", "writes"}) {
        EXPECT_TRUE(json_text(row[k]) == "0" || json_text(row[k]) == "not observed") << key << k;
      }
      continue;
    }
    ++compared;
    auto& s = shown[key];
    for (const char* k : {"reads", "writes", "other", "read_bytes", "write_bytes"}) {
      EXPECT_EQ(s[k], json_text(row[k])) << key << " " << k;
    }
    EXPECT_EQ(s["reads_shown"], s["reads"]);
    EXPECT_EQ(s["writes_shown"], s["writes"]);
  }
  size_t at = html.find("<tr data-layer");
  EXPECT_GE(compared, 3u) << "syscall, VFS, FS or block missing from the funnel: "
                          << (at == std::string::npos ? html.substr(0, 300) : html.substr(at, 600));
}

using BrowserTest = ezio::test::RecordedSuite;

TEST_F(BrowserTest, ConsoleErrorsAreDetected) {
  // The console check itself: a page that logs an error must be caught.
  fs::path page = ezio::test::scratch_dir("browser-console") / "bad.html";
  std::ofstream(page) << "<html><body><script>console.error('broken page')</script></body></html>";
  auto msgs = console_messages(page);
  ASSERT_FALSE(msgs.empty());
  EXPECT_NE(msgs.front().find("broken page"), std::string::npos) << msgs.front();
}

TEST_F(BrowserTest, DemoReport) {
  check_page(record({EZIO_DEMO, data_dir("demo").string()}, "demo", true), "demo");
}

TEST_F(BrowserTest, MisalignedWorkloadReport) {
  check_page(
      record({EZIO_WORKLOAD, "misaligned", data_dir("misaligned").string()}, "misaligned", false),
      "misaligned");
}

TEST_F(BrowserTest, ThreadsWorkloadReport) {
  check_page(record({EZIO_WORKLOAD, "threads", data_dir("threads").string()}, "threads", false),
             "threads");
}

TEST_F(BrowserTest, ThrottledWorkloadReport) {
  fs::path trace;
  {
    ezio::test::DirtyLimit limit(bdi_dir(), 4 << 20);
    trace = record({EZIO_WORKLOAD, "throttle", data_dir("throttle").string()}, "throttle", false);
  }
  check_page(trace, "throttle");
  std::string html = dom(trace.parent_path() / "report.html");
  EXPECT_NE(html.find("data-rule=\"dirty-throttling\""), std::string::npos);
  // The writer's throttled time in the threads table, and the kernel it was recorded on.
  static const std::regex throttled(R"re(data-throttled-s="([0-9.e+-]+)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, throttled)) << "no throttled time in the threads table";
  EXPECT_GT(std::stod(m[1]), 0.0);
  // And the file it wrote, in the files table.
  static const std::regex file_throttled(R"re(data-file-throttled-s="([0-9.e+-]+)")re");
  ASSERT_TRUE(std::regex_search(html, m, file_throttled)) << "no throttled time in the files table";
  EXPECT_GT(std::stod(m[1]), 0.0);
  EXPECT_NE(html.find("Linux " + ezio::test::must_run({"uname", "-r"}).substr(0, 4)),
            std::string::npos);
}

// tests/programs/hdf5/hdf5_serial.c under `-t hdf5,posixio`: its datasets in the page, with the
// bytes asked of each (docs/hdf5.md) and what `eziotrace datasets` says reached POSIX below them.
TEST_F(BrowserTest, Hdf5DatasetsReport) {
  fs::path trace = record({ezio::test::program("hdf5_serial"), data_dir("hdf5").string()}, "hdf5",
                          true, {"-t", "hdf5,posixio"});
  check_page(trace, "hdf5", true);
  std::string html = dom(trace.parent_path() / "report.html");
  ezio::test::Run ds = ezio::test::eziotrace({"datasets", "--json", trace.string()});
  ASSERT_EQ(ds.status, 0) << ds.err;
  json rows = json::parse(ds.out)["datasets"];
  ASSERT_EQ(rows.size(), 6u) << rows.dump(1);
  for (auto& r : rows) {
    std::string object = r["object"];
    EXPECT_NE(html.find(fmt::format(
                  "<tr data-dataset=\"{}\" data-writes=\"{}\" data-reads=\"{}\" "
                  "data-asked-write=\"{}\" data-asked-read=\"{}\" data-posix=\"{}\" "
                  "data-syscall=\"{}\">",
                  object, r["writes"].get<uint64_t>(), r["reads"].get<uint64_t>(),
                  r["asked_write_bytes"].get<uint64_t>(), r["asked_read_bytes"].get<uint64_t>(),
                  r["posix_bytes"].get<uint64_t>(), r["syscall_bytes"].get<uint64_t>())),
              std::string::npos)
        << object;
  }
  // The contiguous dataset: 4 quarters and a failed write asked, 4 quarters written inside.
  EXPECT_NE(html.find("<tr data-dataset=\"/g/temperature\" data-writes=\"5\" data-reads=\"1\" "
                      "data-asked-write=\"524328\" data-asked-read=\"524288\""),
            std::string::npos);
}

// A clock file as `record --clock-ref node1` writes it.
void clock_file(const fs::path& dir, const std::string& host, int64_t offset_ns, int64_t error) {
  json m = {{"offset_ns", offset_ns}, {"error_ns", error}, {"at_ns", 0}, {"rounds", 200}};
  std::ofstream(dir / "eziotrace-clock.json")
      << json{{"reference", "node1"}, {"host", host}, {"start", m}, {"end", m}}.dump();
}

// A session's window of the node's table (recorder/archive/block_archive.cpp): `start` and `end`
// unattributed requests of 4 KiB, no not-issued flush.
std::map<std::string, uint64_t> window(uint64_t start, uint64_t end) {
  namespace s = ezio::schema;
  return {{s::kUnattributedTable, 7},
          {s::kUnattributedRequestsAtStart, start},
          {s::kUnattributedRequestsAtEnd, end},
          {s::kUnattributedBytesAtStart, start * 4096},
          {s::kUnattributedBytesAtEnd, end * 4096},
          {s::kNotIssuedRequestsAtStart, 0},
          {s::kNotIssuedRequestsAtEnd, 0}};
}

// The cells' text of a host's row of the hosts section, as read: a line break a space, other
// tags left out.
std::vector<std::string> host_cells(const std::string& html, const std::string& host) {
  static const std::regex row_re(R"re(<tr data-host="(\w+)">(.*?)</tr>)re");
  static const std::regex cell_re(R"re(<td[^>]*>(.*?)</td>)re");
  static const std::regex br_re("<br>"), tag_re("<[^>]*>");
  std::vector<std::string> cells;
  for (std::sregex_iterator it(html.begin(), html.end(), row_re), end; it != end; ++it) {
    if ((*it)[1] != host) continue;
    const std::string row = (*it)[2];
    for (std::sregex_iterator c(row.begin(), row.end(), cell_re); c != end; ++c) {
      cells.push_back(
          std::regex_replace(std::regex_replace((*c)[1].str(), br_re, " "), tag_re, ""));
    }
  }
  return cells;
}

// Three recordings as two hosts of one Slurm job (split_hosts renames each and adds the Slurm ids
// the recording side writes), merged: one row per host with what each recorded. node1 has two
// sessions (two tasks) whose windows leave 5 requests of its disk between them: its block
// requests say so.
TEST_F(BrowserTest, HostsOfAMergedJob) {
  const fs::path a = record({EZIO_DEMO, data_dir("host-a").string()}, "host-a", false);
  const fs::path b =
      record({EZIO_WORKLOAD, "misaligned", data_dir("host-b").string()}, "host-b", false);
  const fs::path dir = ezio::test::scratch_dir("report-hosts");
  const std::map<std::string, std::string> slurm = {{"EZIOTRACE::SLURM_JOB_ID", "4242"},
                                                    {"EZIOTRACE::SLURM_STEP_ID", "0"}};
  auto all = [](const std::string&) { return size_t{0}; };
  const fs::path p1a =
      ezio::test::split_hosts(a, {"node1"}, all, dir / "a", slurm, window(10, 15))[0];
  const fs::path p1b =
      ezio::test::split_hosts(b, {"node1"}, all, dir / "b", slurm, window(20, 30))[0];
  const fs::path p2 = ezio::test::split_hosts(b, {"node2"}, all, dir / "p", slurm)[0];
  clock_file(p1a, "node1", 0, 4'000);
  clock_file(p1b, "node1", 0, 4'000);
  clock_file(p2, "node2", -6'657'093'473, 303'000);
  const fs::path merged = dir / "job";
  auto r = ezio::test::eziotrace(
      {"merge-hosts", p1a.string(), p1b.string(), p2.string(), "-o", merged.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  check_page(merged / "eziotrace.otf2", "hosts", false, true);
  const std::string html = dom(merged / "report.html");
  const std::string kernel = ezio::test::must_run({"uname", "-r"});
  for (const char* host : {"node1", "node2"}) {
    SCOPED_TRACE(host);
    const std::vector<std::string> cells = host_cells(html, host);
    ASSERT_GE(cells.size(), 11u) << "no row for the host, or a short one";
    EXPECT_EQ(cells[0], host);
    EXPECT_GE(std::stoi(cells[1]), 1) << "processes that did the application's I/O";
    EXPECT_EQ(cells[2], "0") << "ranks: recorded without EZTrace";
    const std::string& requests = cells[cells.size() - 7];
    const std::regex expected(host == std::string("node1") ? R"re(\d+ \+5 between its sessions)re"
                                                           : R"re(\d+)re");
    EXPECT_TRUE(std::regex_match(requests, expected)) << requests;
    EXPECT_EQ(cells[cells.size() - 6].substr(0, 4), "loop") << "its device, by its name";
    EXPECT_NE(cells[cells.size() - 4].find(kernel.substr(0, kernel.find_first_of(" \n"))),
              std::string::npos);
    EXPECT_EQ(cells.back(), "4242.0");
    const std::string clock = cells[cells.size() - 3] + " " + cells[cells.size() - 2];
    EXPECT_EQ(clock, host == std::string("node1") ? "0 4.000 us" : "−6.657 s 303.000 us");
  }
  // What a person reads under the table says what the figure is.
  EXPECT_NE(html.find("Block requests between its sessions"), std::string::npos);
}

TEST(ReportBadInput, ClearMessageNoPage) {
  fs::path dir = ezio::test::scratch_dir("report-bad");
  fs::create_directories(dir / "empty-dir");
  std::ofstream(dir / "garbage.otf2") << "this is not an OTF2 anchor file\n";
  std::ofstream(dir / "empty.otf2");
  for (fs::path input :
       {dir / "missing.otf2", dir / "empty-dir", dir / "garbage.otf2", dir / "empty.otf2"}) {
    fs::path page = dir / "out.html";
    ezio::test::Run r = ezio::test::eziotrace({"report", "-o", page.string(), input.string()});
    EXPECT_GT(r.status, 0) << input;
    EXPECT_LT(r.status, 128) << input;
    EXPECT_NE(r.err.find(input.filename().string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(page)) << input;
    r = ezio::test::eziotrace({"advise", input.string()});
    EXPECT_GT(r.status, 0) << input;
    EXPECT_LT(r.status, 128) << input;
  }
}

TEST(ReportBadInput, ExistingFileSurvivesWithoutForce) {
  fs::path dir = ezio::test::scratch_dir("report-keep");
  fs::path page = dir / "mine.html";
  std::ofstream(page) << "the user's own page";
  ezio::test::Run r =
      ezio::test::eziotrace({"report", "-o", page.string(), (dir / "x.otf2").string()});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  std::ifstream in(page);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "the user's own page");
}

TEST(ReportBadInput, ForceReplacesOnlyAPageEziotraceWrote) {
  fs::path dir = ezio::test::scratch_dir("report-force");
  fs::path page = dir / "mine.html";
  std::ofstream(page) << "<html>the user's own page</html>";
  ezio::test::Run r = ezio::test::eziotrace(
      {"report", "-f", "-o", page.string(), ezio::test::write_basic_archive(dir / "t").string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("not a file eziotrace wrote"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(page), "<html>the user's own page</html>");
  // A page eziotrace wrote is replaced.
  fs::path ours = dir / "ours.html";
  fs::path trace = ezio::test::write_basic_archive(dir / "t2");
  ASSERT_EQ(ezio::test::eziotrace({"report", "-o", ours.string(), trace.string()}).status, 0);
  ezio::test::Run again =
      ezio::test::eziotrace({"report", "-f", "-o", ours.string(), trace.string()});
  EXPECT_EQ(again.status, 0) << again.err;
}

}  // namespace
