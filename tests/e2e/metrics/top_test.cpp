// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace top` for real, run as nobody (no root, no BPF): a job of known I/O (dd to a file on a
// private loop device, in a cgroup of its own) is shown with the bytes dd wrote; the table's
// layout; a clear message when no eziotraced serves metrics; the textfile read instead. The job's
// cgroup is named as systemd names a scope: top names it by that unit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "loop_fs.h"
#include "metrics_env.h"

namespace ezio::test {
namespace {

// eziotrace top as an unprivileged user.
Run top_as_nobody(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", EZIO_BINARY, "top"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// The job of that cgroup in a JSON frame (null when absent).
nlohmann::json job_in(const nlohmann::json& frame, const std::string& cgroup) {
  for (const auto& j : frame["jobs"]) {
    if (j["cgroup"] == cgroup) return j;
  }
  return nullptr;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class Top : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    disk_ = new LoopFs("ext4");
    job_ = new TestCgroup(TestCgroup::SystemdScope{"ezio_test.slice", "ezio-top"});
    port_ = free_port();
    textfile_ = scratch_dir("top") / "eziotrace.prom";
    daemon_ = new MetricsDaemon({"--metrics", std::to_string(port_), "--metrics-textfile",
                                 textfile_.string(), "--metrics-textfile-period", "1"});
    expect_success(job_->spawn({"dd", "if=/dev/zero", "of=" + (*disk_ / "out").string(), "bs=4096",
                                "count=1000", "conv=fsync", "status=none"}));
  }
  static void TearDownTestSuite() {
    delete daemon_;
    delete job_;
    delete disk_;
  }
  // The scope, as the job's unit label and top's JOB column show it.
  static std::string unit() { return job_->path().substr(job_->path().rfind('/') + 1); }
  static inline LoopFs* disk_ = nullptr;
  static inline TestCgroup* job_ = nullptr;
  static inline MetricsDaemon* daemon_ = nullptr;
  static inline int port_ = 0;
  static inline std::filesystem::path textfile_;
};

TEST_F(Top, JsonShowsTheJobWithTheBytesItWrote) {
  ezio::test::Run r = top_as_nobody(
      {"--metrics", std::to_string(port_), "--iterations", "2", "--interval", "0.5", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> frames;
  for (std::string l; std::getline(lines, l);) frames.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(frames.size(), 2u) << r.out;
  EXPECT_NEAR(frames[1]["interval_s"].get<double>(), 0.5, 0.4);
  nlohmann::json job = job_in(frames[1], job_->path());
  ASSERT_FALSE(job.is_null()) << frames[1].dump(1);
  EXPECT_EQ(job["totals"]["write_bytes"], 4096000.0);
  EXPECT_EQ(job["totals"]["write_calls"], 1000.0);
  EXPECT_EQ(job["totals"]["fsyncs"], 1.0);
  // The data reached the disk through the job's own fsync: charged to it (the journal's writes are
  // jbd2's, no one's).
  EXPECT_EQ(job["totals"]["block_write_bytes"], 4096000.0);
  EXPECT_EQ(job["totals"]["dirtied_pages"], 1000.0);
  EXPECT_EQ(job["users"], nlohmann::json::array({"root"}));
  EXPECT_EQ(job["unit"], unit());
  EXPECT_EQ(job["slice"], "ezio_test.slice");
  EXPECT_FALSE(job.contains("job_id"));
  // The job did nothing during the frames: no rate, and no latency measured meanwhile.
  EXPECT_EQ(job["per_second"]["write_bytes"], 0.0);
  EXPECT_TRUE(job["p99_seconds"]["syscall_write"].is_null());
}

TEST_F(Top, TableHasOneLinePerJobUnderItsHeader) {
  ezio::test::Run r = top_as_nobody(
      {"--metrics", std::to_string(port_), "--once", "--interval", "0.2", "--sort", "cgroup"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string title, header, line;
  std::getline(lines, title);
  std::getline(lines, header);
  EXPECT_TRUE(title.starts_with("eziotrace top — http://127.0.0.1:" + std::to_string(port_) +
                                "/metrics on "))
      << title;
  EXPECT_NE(title.find("by cgroup"), std::string::npos) << title;
  std::vector<std::string> columns = {
      "JOB",     "USER",   "READ/s",  "WRITE/s", "CALLS/s", "FSYNC",  "FSOPS/s", "P99FS",
      "DIRTY/s", "MISS/s", "BLKRD/s", "BLKWR/s", "REQ/s",   "P99SYS", "P99BLK",  "THR%"};
  EXPECT_EQ(words(header), columns);
  std::vector<std::string> ours, previous;
  std::string our_line;
  while (std::getline(lines, line) && !line.empty()) {
    std::vector<std::string> w = words(line);
    if (w[0] == unit()) {  // named by its unit, not its cgroup path
      ours = w;
      our_line = line;
    }
    // Other jobs of the machine may be cut ("…" first), have ended meanwhile ("(ended, id N)") or
    // be named by a unit of theirs: the order is checked on those named by their path.
    if (!line.starts_with("/")) continue;
    EXPECT_EQ(w.size(), columns.size()) << line;
    if (!previous.empty()) {
      EXPECT_LT(previous[0], w[0]) << "not sorted by cgroup";
    }
    previous = w;
  }
  ASSERT_FALSE(ours.empty()) << r.out;
  EXPECT_EQ(ours.size(), columns.size()) << our_line;
  EXPECT_EQ(our_line.find(" root "), 24u) << "USER's column: " << our_line;
  EXPECT_EQ(header.find(" USER "), 24u) << header;
  EXPECT_EQ(ours[1], "root");
  EXPECT_EQ(ours[2], "0") << "no bytes read during the frame";
  EXPECT_EQ(ours[6], "0") << "no FS operation during the frame";
  EXPECT_EQ(ours[7], "-") << "no FS operation during the frame: no p99";
  EXPECT_EQ(ours[13], "-") << "no call during the frame: no p99";
}

TEST_F(Top, ReadsTheTextfileToo) {
  ezio::test::Run r =
      top_as_nobody({"--textfile", textfile_.string(), "--once", "--interval", "1.2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json job = job_in(nlohmann::json::parse(r.out), job_->path());
  ASSERT_FALSE(job.is_null()) << r.out;
  EXPECT_EQ(job["totals"]["write_bytes"], 4096000.0);
  EXPECT_EQ(job["unit"], unit());
  // node_exporter's format carries the labels as the endpoint does.
  std::ifstream in(textfile_);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(
      text.find("eziotrace_syscall_bytes_total{cgroup=\"" + job_->path() + "\",unit=\"" + unit() +
                "\",slice=\"ezio_test.slice\",user=\"root\",op=\"write\"} 4096000\n"),
      std::string::npos)
      << text;
}

// One line per device: the private ext4 device with the job among those charged with its I/O, its
// VFS bytes exactly dd's (no one else writes that file system), its block writes dd's data at
// least (the journal's are no one's, on the same device).
TEST_F(Top, ByDeviceShowsTheDeviceTheJobWrote) {
  ezio::test::Run r = top_as_nobody({"--metrics", std::to_string(port_), "--by", "device", "--once",
                                     "--interval", "0.2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json frame = nlohmann::json::parse(r.out), disk;
  for (const auto& d : frame["jobs"]) {
    if (d["device"] == disk_->device()) disk = d;
  }
  ASSERT_FALSE(disk.is_null()) << r.out;
  EXPECT_EQ(disk["jobs"], nlohmann::json::array({job_->path()}));
  EXPECT_EQ(disk["totals"]["vfs_write_bytes"], 4096000.0);
  EXPECT_GE(disk["totals"]["block_write_bytes"].get<double>(), 4096000.0);
  EXPECT_EQ(disk["totals"]["dirtied_pages"], 1000.0);
  // The FS layer: on ext4's tracepoints (this host), each of the 1000 pages written and the fsync.
  EXPECT_EQ(disk["totals"]["fs_calls"], 1001.0);
  EXPECT_EQ(disk["fstype"], "ext4");
  EXPECT_EQ(disk["per_second"]["block_write_bytes"], 0.0) << "nothing written during the frame";
  EXPECT_EQ(disk["name"], disk_->device()) << "a block device keeps its name";
  // The node's file systems without a block device (proc at least: someone reads it) are named by
  // their type and mount point, not the kernel's major:minor.
  std::set<std::string> names;
  for (const auto& d : frame["jobs"]) {
    // Longer names are cut to the column's 20 characters; a mount point may hold a space.
    std::string name = d["name"];
    if (name.size() <= 20 && name.find(' ') == std::string::npos) names.insert(name);
    if (d.contains("fstype") && d["fstype"] == "proc") {
      EXPECT_EQ(d["name"], "proc:/proc") << d;
    }
  }
  ezio::test::Run table = top_as_nobody({"--metrics", std::to_string(port_), "--by", "device",
                                         "--once", "--interval", "0.2", "--sort", "device"});
  ASSERT_EQ(table.status, 0) << table.err;
  std::istringstream lines(table.out);
  std::string title, header, line;
  std::getline(lines, title);
  std::getline(lines, header);
  EXPECT_NE(title.find(" devices by device"), std::string::npos) << title;
  EXPECT_EQ(words(header),
            (std::vector<std::string>{"DEVICE", "JOBS", "VFSRD/s", "VFSWR/s", "FSOPS/s", "P99FS",
                                      "DIRTY/s", "MISS/s", "BLKRD/s", "BLKWR/s", "REQ/s", "NOJOB%",
                                      "P99BLK", "P99Q"}));
  std::vector<std::string> ours;
  while (std::getline(lines, line) && !line.empty()) {
    if (line.starts_with(disk_->device() + " ")) ours = words(line);
    names.erase(words(line).at(0));
  }
  // Totals are since eziotraced started: every device of the first frame is in the second one.
  EXPECT_TRUE(names.empty()) << "named in the JSON, not in the table: " << *names.begin();
  ASSERT_EQ(ours.size(), 14u) << table.out;
  EXPECT_EQ(ours[1], "1") << "one job charged";
  EXPECT_EQ(ours[9], "0") << "no block write during the frame";
}

TEST(TopWithoutService, SaysNoEziotracedServesMetrics) {
  int port = free_port();
  ezio::test::Run r = top_as_nobody({"--metrics", std::to_string(port), "--once"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("no eziotraced serves metrics at http://127.0.0.1:" + std::to_string(port) +
                       "/metrics (Connection refused)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("eziotraced --metrics PORT"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  ezio::test::Run bad = top_as_nobody({"--sort", "nonsense"});
  EXPECT_EQ(bad.status, 2) << bad.err;
  ezio::test::Run missing = top_as_nobody({"--textfile", "/nonexistent/eziotrace.prom", "--once"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot read the metrics textfile"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace ezio::test
