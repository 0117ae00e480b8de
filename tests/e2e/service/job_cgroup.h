// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A cgroup v2 of the test's own, owned by a user (as systemd or Slurm delegate a job's), removed
// at the end; programs run inside it as a user, as a job launcher runs them.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ezio::test {

inline std::filesystem::path cgroup2_root() {
  for (const char* p : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    if (std::filesystem::exists(std::filesystem::path(p) / "cgroup.threads")) return p;
  }
  throw std::runtime_error("no cgroup v2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup");
}

// A cgroup v2 of the test's own, owned by a user (as systemd or Slurm delegate a job's), removed
// at the end. With `below` ("step_0/user/task_0", as Slurm's), its programs run in cgroups made
// that deep below it, root's, as Slurm's are.
class JobCgroup {
 public:
  JobCgroup(const std::string& name, uid_t owner, const std::string& below = "")
      : dir_(cgroup2_root() / name) {
    ::rmdir(dir_.c_str());
    if (::mkdir(dir_.c_str(), 0755) != 0 || chown(dir_.c_str(), owner, owner) != 0) {
      throw std::runtime_error("cannot make cgroup " + dir_.string());
    }
    run_dir_ = dir_;
    for (const auto& part : std::filesystem::path(below)) {
      run_dir_ /= part;
      if (::mkdir(run_dir_.c_str(), 0755) != 0) {
        throw std::runtime_error("cannot make cgroup " + run_dir_.string());
      }
    }
  }
  ~JobCgroup() {
    for (auto d = run_dir_; d != dir_; d = d.parent_path()) ::rmdir(d.c_str());
    if (::rmdir(dir_.c_str()) != 0) ADD_FAILURE() << "cannot remove cgroup " << dir_;
  }
  std::string path() const { return "/" + dir_.filename().string(); }
  // Runs argv inside the cgroup as user (moved in as root, then the user's, then its exec: what a
  // job launcher does) to its end; fails the test unless it exits 0.
  void run_as(const std::string& user, const std::vector<std::string>& argv) const {
    pid_t pid = start_as(user, argv);
    ASSERT_GT(pid, 0);
    finish(pid, argv);
  }
  // The same, not waited for: finish(pid, argv) waits for it (a process there before a job's
  // recording begins).
  pid_t start_as(const std::string& user, const std::vector<std::string>& argv) const {
    passwd* pw = getpwnam(user.c_str());
    if (!pw) {
      ADD_FAILURE() << "no user " << user;
      return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
      std::ofstream(run_dir_ / "cgroup.procs") << 0 << std::endl;
      if (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
        _exit(126);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    return pid;
  }
  static void finish(pid_t pid, const std::vector<std::string>& argv) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << argv.back();
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path run_dir_;  // where run_as runs: dir_ or below it
};

}  // namespace ezio::test
