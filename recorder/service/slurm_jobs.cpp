// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/slurm_jobs.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <regex>

#include "common/error.h"
#include "common/log.h"
#include "common/unique_fd.h"

extern char** environ;

namespace ezio::recorder::service {

std::optional<std::string> slurm_job_of_dir(const std::string& name) {
  static const std::regex job("job_([0-9]+)");
  std::smatch m;
  if (!std::regex_match(name, m, job)) return std::nullopt;
  return m[1].str();
}

std::optional<uid_t> scontrol_user_id(const std::string& output) {
  // UserId=alice(1001); a user unknown to the node's passwd is shown as UserId=(1001) or
  // UserId=1001(1001).
  static const std::regex user(R"((^|\s)UserId=[^\s(]*\(([0-9]+)\))");
  std::smatch m;
  if (!std::regex_search(output, m, user)) return std::nullopt;
  return uid_t(std::stoul(m[2].str()));
}

namespace {

// What the command writes (stdout and stderr) within timeout_ms (it is killed after), and whether
// it exited 0.
std::pair<std::string, bool> run_output(const char* const argv[], int timeout_ms) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) fail("pipe2: {}", errno_text(errno));
  UniqueFd read_end(out[0]), write_end(out[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 1);
  // Its errors too: the log then says why a job has no user.
  posix_spawn_file_actions_adddup2(&fa, write_end.get(), 2);
  pid_t pid = 0;
  int err = posix_spawnp(&pid, argv[0], &fa, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) return {fmt::format("cannot run {}: {}", argv[0], errno_text(err)), false};
  write_end = UniqueFd();
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{read_end.get(), POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, int(left.count())) == 0) {
      kill(pid, SIGKILL);
      text = fmt::format("{} did not answer within {} ms", argv[0], timeout_ms);
      break;
    }
    char buf[4096];
    ssize_t n = read(read_end.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, size_t(n));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {text, WIFEXITED(status) && WEXITSTATUS(status) == 0};
}

}  // namespace

std::optional<uid_t> slurm_job_user(const std::string& id, int timeout_ms) {
  const char* argv[] = {"scontrol", "show", "job", "-o", id.c_str(), nullptr};
  auto [text, ok] = run_output(argv, timeout_ms);
  std::optional<uid_t> uid = ok ? scontrol_user_id(text) : std::nullopt;
  if (!uid) {
    spdlog::warn("flight recorder: Slurm job {}: no user from `scontrol show job -o {}`: {}", id,
                 id, text.empty() ? "no output" : text.substr(0, 300));
  }
  return uid;
}

void SlurmJobSet::reconcile(const std::set<std::string>& present, const Actions& act) {
  for (auto it = recorded_.begin(); it != recorded_.end();) {
    if (present.count(*it)) {
      ++it;
      continue;
    }
    act.remove(*it);
    ++removed_;
    it = recorded_.erase(it);
  }
  std::erase_if(refused_, [&](const std::string& n) { return !present.count(n); });
  for (const std::string& name : present) {
    if (recorded_.count(name) || refused_.count(name)) continue;
    if (act.add(name)) {
      recorded_.insert(name);
      ++added_;
    } else {
      refused_.insert(name);
      ++refused_total_;
    }
  }
}

nlohmann::json SlurmJobSet::status() const {
  return {{"recorded", recorded_.size()},
          {"added", added_},
          {"removed", removed_},
          {"refused", refused_total_},
          {"refused_now", refused_}};
}

}  // namespace ezio::recorder::service
