// SPDX-License-Identifier: GPL-2.0-only
#include "service_env.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "loop_fs.h"
#include "recorder/service/client.h"

namespace fs = std::filesystem;

namespace ezio::test {
namespace {

void remove_user(const std::string& user) {
  if (!getpwnam(user.c_str())) return;
  Run r = run({"userdel", user});
  // A process of the user's still running (a test's leftover) keeps it: said, not ignored.
  if (r.status != 0) ADD_FAILURE() << "cannot remove test user " << user << ": " << r.err;
}

}  // namespace

ServiceGroup::ServiceGroup() {
  if (geteuid() != 0)
    throw std::runtime_error("the service tests need root (groupadd, eziotraced)");
  if (getgrnam("eziotrace")) return;
  must_run({"groupadd", "--system", "eziotrace"});
  made_ = true;
}

ServiceGroup::~ServiceGroup() {
  if (made_) run({"groupdel", "eziotrace"});
}

TestUsers::TestUsers() {
  for (const char* u : {kUserA, kUserB, kUserC}) remove_user(u);
  must_run({"useradd", "-M", "-G", "eziotrace", kUserA});
  must_run({"useradd", "-M", "-G", "eziotrace", kUserB});
  must_run({"useradd", "-M", kUserC});
}

TestUsers::~TestUsers() {
  for (const char* u : {kUserA, kUserB, kUserC}) remove_user(u);
  // The users' directories (user_dir()): their owners are gone.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/tmp/ezio-service-test", ec)) {
    std::string name = e.path().filename().string();
    for (const char* u : {kUserA, kUserB, kUserC}) {
      if (name.starts_with(std::string(u) + "-")) fs::remove_all(e.path(), ec);
    }
  }
}

uid_t TestUsers::uid(const std::string& user) const {
  passwd* pw = getpwnam(user.c_str());
  if (!pw) throw std::runtime_error("no user " + user);
  return pw->pw_uid;
}

ServiceDaemon::ServiceDaemon(const std::string& name, const std::vector<std::string>& extra) {
  fs::path dir = fs::path("/tmp/ezio-service-test") / name;
  fs::create_directories(dir);
  chmod("/tmp/ezio-service-test", 0755);
  socket_ = (dir / "eziotraced.sock").string();
  std::vector<std::string> argv{EZIO_DAEMON, "--foreground", "--socket", socket_};
  argv.insert(argv.end(), extra.begin(), extra.end());
  daemon_ = std::make_unique<Background>(argv, "eziotraced: ready");
}

void ServiceDaemon::kill_now() { daemon_.reset(); }

nlohmann::json ServiceDaemon::status() const {
  return recorder::service::ServiceClient(socket_).status();
}

bool ServiceDaemon::wait_sessions(unsigned sessions) const {
  for (int i = 0; i < 200; ++i) {
    if (status().value("sessions", 0u) == sessions) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

Run as_user(const std::string& user, const std::vector<std::string>& argv, const fs::path& cwd) {
  std::vector<std::string> full{"runuser", "-u", user, "--", "env", "-C", cwd.string()};
  full.insert(full.end(), argv.begin(), argv.end());
  return run(full);
}

fs::path user_dir(const std::string& user, const std::string& name) {
  fs::path root = "/tmp/ezio-service-test";
  fs::create_directories(root);
  chmod(root.c_str(), 0755);
  fs::path dir = root / (user + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  passwd* pw = getpwnam(user.c_str());
  if (!pw || chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0 || chmod(dir.c_str(), 0700) != 0) {
    throw std::runtime_error("cannot give " + dir.string() + " to " + user);
  }
  return dir;
}

uid_t owner_of(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw std::runtime_error("no " + path.string());
  return st.st_uid;
}

std::set<long> bpf_objects_of(pid_t pid, const std::string& key) {
  std::set<long> ids;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fdinfo")) {
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with(key + ":")) ids.insert(std::stol(line.substr(key.size() + 1)));
    }
  }
  return ids;
}

size_t perf_events_of(pid_t pid) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    n += fs::read_symlink(e.path(), ec).string() == "anon_inode:[perf_event]";
  }
  return n;
}

bool wait_for(const std::function<bool()>& done) {
  for (int i = 0; i < 400; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

size_t dev_null_fds(pid_t pid) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    std::error_code ec;
    n += fs::read_symlink(e.path(), ec) == "/dev/null";
  }
  return n;
}

void send_raw(int sock, const std::string& bytes, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<size_t>(fds.size(), 1)));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  sendmsg(sock, &msg, MSG_NOSIGNAL);
}

std::string framed(uint32_t magic, uint16_t version, uint16_t type, const std::string& body,
                   int length_delta) {
  recorder::service::Header h{magic, version, type, uint32_t(body.size() + length_delta)};
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + body;
}

}  // namespace ezio::test
