// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What the service tests share: real users (two in group eziotrace, one not), an eziotraced of
// the test's own on a private socket, commands run as one of the users.
#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "run.h"

namespace ezio::test {

inline constexpr char kUserA[] = "ezio_a";  // in group eziotrace
inline constexpr char kUserB[] = "ezio_b";  // in group eziotrace
inline constexpr char kUserC[] = "ezio_c";  // not in it

// Group eziotrace, which eziotraced needs: made when missing, and then removed at the end.
class ServiceGroup {
 public:
  ServiceGroup();
  ~ServiceGroup();

 private:
  bool made_ = false;
};

// Creates the group (if missing) and the three users; removes the users at the end. Fails the
// test (throws) when not root or useradd is missing.
class TestUsers {
 public:
  TestUsers();
  ~TestUsers();
  uid_t uid(const std::string& user) const;

 private:
  ServiceGroup group_;
};

// The fixture of a test suite whose tests need the users: made once for the suite, removed after.
class WithTestUsers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { users_ = std::make_unique<TestUsers>(); }
  static void TearDownTestSuite() { users_.reset(); }
  static inline std::unique_ptr<TestUsers> users_;
};

// `eziotraced --foreground --socket <private path>` until destroyed (killed).
class ServiceDaemon {
 public:
  explicit ServiceDaemon(const std::string& name, const std::vector<std::string>& extra = {});
  const std::string& socket() const { return socket_; }
  pid_t pid() const { return daemon_->pid(); }
  // Kills it (SIGKILL) now.
  void kill_now();
  // The STATE reply, asked as root (sees every session).
  nlohmann::json status() const;
  // Waits (up to 20 s) until `sessions` sessions are open; false if they never are.
  bool wait_sessions(unsigned sessions) const;

 private:
  std::string socket_;
  std::unique_ptr<Background> daemon_;
};

// What one test suite shares: the users and an eziotraced of its own, made by the suite's
// SetUpTestSuite (start) and ended by its TearDownTestSuite (stop), daemon first.
struct SuiteServices {
  std::unique_ptr<TestUsers> users;
  std::unique_ptr<ServiceDaemon> daemon;
  void start(const std::string& name) {
    users = std::make_unique<TestUsers>();
    daemon = std::make_unique<ServiceDaemon>(name);
  }
  void stop() {
    daemon.reset();
    users.reset();
  }
};

// argv run as `user` (runuser), in directory `cwd`.
Run as_user(const std::string& user, const std::vector<std::string>& argv,
            const std::filesystem::path& cwd = "/tmp");
// A fresh directory owned by `user` (mode 0700) under a world-traversable scratch root.
std::filesystem::path user_dir(const std::string& user, const std::string& name);
// Owner uid of a file.
uid_t owner_of(const std::filesystem::path& path);

// The ids of the BPF programs ("prog_id") or links ("link_id") whose fds `pid` holds, from
// /proc/PID/fdinfo (bpftool here cannot say which process holds what).
std::set<long> bpf_objects_of(pid_t pid, const std::string& key);
// The perf events whose fds pid holds (a program attached through one: kprobes, tracepoints).
size_t perf_events_of(pid_t pid);
// The fds of process pid that are /dev/null.
size_t dev_null_fds(pid_t pid);
// Sends raw bytes (and fds) as one datagram; ignores failures (the peer may have hung up).
void send_raw(int sock, const std::string& bytes, const std::vector<int>& fds = {});
// A message's header (protocol.h) of these fields, then body; the length says body's size plus
// length_delta.
std::string framed(uint32_t magic, uint16_t version, uint16_t type, const std::string& body,
                   int length_delta = 0);
// Polls `done` every 50 ms until it is true (true) or 20 s have passed (false).
bool wait_for(const std::function<bool()>& done);

}  // namespace ezio::test
