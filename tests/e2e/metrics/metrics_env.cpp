// SPDX-License-Identifier: GPL-2.0-only
#include "metrics_env.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace ezio::test {
namespace fs = std::filesystem;

namespace {

fs::path cgroup2_root() {
  for (const char* p : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    if (fs::exists(fs::path(p) / "cgroup.procs") && fs::exists(fs::path(p) / "cgroup.threads")) {
      return p;
    }
  }
  throw std::runtime_error("no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup");
}

}  // namespace

TestCgroup::TestCgroup(const std::string& name) {
  if (geteuid() != 0) throw std::runtime_error("the metrics tests need root (cgroups, BPF)");
  std::string leaf = name + "_" + std::to_string(getpid());
  dir_ = cgroup2_root() / leaf;
  path_ = "/" + leaf;
  fs::create_directory(dir_);
}

TestCgroup::TestCgroup(const SystemdScope& scope) {
  if (geteuid() != 0) throw std::runtime_error("the metrics tests need root (cgroups, BPF)");
  fs::path slice = cgroup2_root() / scope.slice;
  if (fs::create_directory(slice)) made_slice_ = slice;
  std::string leaf = scope.name + "-" + std::to_string(getpid()) + ".scope";
  dir_ = slice / leaf;
  path_ = "/" + scope.slice + "/" + leaf;
  fs::create_directory(dir_);
}

TestCgroup::~TestCgroup() { remove(); }

void TestCgroup::remove() {
  if (removed_) return;
  removed_ = true;
  // rmdir only: a cgroup's files cannot be removed.
  if (::rmdir(dir_.c_str()) != 0) ADD_FAILURE() << "cannot remove cgroup " << dir_;
  if (!made_slice_.empty() && ::rmdir(made_slice_.c_str()) != 0) {
    ADD_FAILURE() << "cannot remove cgroup " << made_slice_;
  }
}

pid_t TestCgroup::spawn(const std::vector<std::string>& argv) const {
  int gate[2];
  if (pipe(gate) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    close(gate[1]);
    char c;
    if (read(gate[0], &c, 1) != 1) _exit(126);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(gate[0]);
  std::ofstream(dir_ / "cgroup.procs") << pid << "\n";
  if (write(gate[1], "g", 1) != 1) throw std::runtime_error("gate");
  close(gate[1]);
  return pid;
}

void TestCgroup::adopt(pid_t pid) const {
  std::ofstream procs(dir_ / "cgroup.procs");
  procs << pid << "\n";
  procs.flush();
  if (!procs) throw std::runtime_error("cannot move " + std::to_string(pid) + " into " + path_);
}

void expect_success(pid_t pid) {
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

DiskStat disk_stat(const std::string& dev) {
  std::ifstream in("/sys/block/" + dev + "/stat");
  std::vector<long> f;
  long v;
  while (in >> v) f.push_back(v);
  if (f.size() < 17) throw std::runtime_error("/sys/block/" + dev + "/stat has no flush field");
  return {f[0], f[4], f[11], f[15]};
}

int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  getsockname(s, reinterpret_cast<sockaddr*>(&sa), &len);
  close(s);
  return ntohs(sa.sin_port);
}

MetricsDaemon::MetricsDaemon(const std::vector<std::string>& extra) {
  static int made = 0;
  fs::path dir = scratch_dir("metrics_daemon_" + std::to_string(++made));
  std::vector<std::string> argv = {EZIO_DAEMON, "--foreground", "--socket", (dir / "sock").string(),
                                   "--group",   "root"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  daemon_ = std::make_unique<Background>(argv, "eziotraced: ready");
}

std::string http_exchange(int port, const std::string& request) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(s);
    return "";
  }
  if (!request.empty()) (void)!send(s, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = recv(s, buf, sizeof buf, 0)) > 0) out.append(buf, n);
  close(s);
  return out;
}

std::string scrape(int port, bool openmetrics) {
  std::string accept = openmetrics ? "Accept: application/openmetrics-text; version=1.0.0\r\n" : "";
  std::string r = http_exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n" + accept + "\r\n");
  EXPECT_TRUE(r.starts_with("HTTP/1.1 200 OK\r\n")) << r.substr(0, 200);
  size_t body = r.find("\r\n\r\n");
  return body == std::string::npos ? "" : r.substr(body + 4);
}

double sample_sum(const std::string& text, const std::string& name,
                  const std::map<std::string, std::string>& labels) {
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$)");
  static const std::regex label(R"re(([a-zA-Z_]+)="((?:[^"\\]|\\.)*)")re");
  double sum = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.starts_with("#") || !std::regex_match(line, m, sample) || m[1] != name) continue;
    std::map<std::string, std::string> have;
    std::string ls = m[3];
    for (std::sregex_iterator it(ls.begin(), ls.end(), label), end; it != end; ++it) {
      have[(*it)[1]] = (*it)[2];
    }
    bool match = true;
    for (const auto& [k, v] : labels) match = match && have.count(k) && have[k] == v;
    if (match) sum += std::stod(m[4]);
  }
  return sum;
}

bool mentions_cgroup(const std::string& text, const std::string& path) {
  return text.find("cgroup=\"" + path + "\"") != std::string::npos;
}

size_t links_of(pid_t pid) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fdinfo")) {
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) n += line.starts_with("link_id:");
  }
  return n;
}

}  // namespace ezio::test
