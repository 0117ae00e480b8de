// SPDX-License-Identifier: GPL-2.0-only
#include "run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

extern char** environ;

namespace ezio::test {

Run run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<std::string> full_env;
  // An extra entry replaces the inherited one of that name (getenv() would find the first).
  auto name = [](const std::string& e) { return e.substr(0, e.find('=')); };
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    bool replaced = std::any_of(env.begin(), env.end(),
                                [&](const std::string& x) { return name(x) == name(entry); });
    if (!replaced) full_env.push_back(std::move(entry));
  }
  full_env.insert(full_env.end(), env.begin(), env.end());
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : full_env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execvpe(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  Run r;
  std::array<pollfd, 2> fds{{{out[0], POLLIN, 0}, {err[0], POLLIN, 0}}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, n);
      }
    }
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.max_rss_kb = usage.ru_maxrss;
  return r;
}

Background::Background(const std::vector<std::string>& argv, const std::string& ready_line) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC)) throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(out[1], 1);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  close(out[1]);
  bool ready = ready_line.empty();
  std::string line;
  char c;
  while (!ready && read(out[0], &c, 1) == 1) {
    if (c != '\n') {
      line += c;
      continue;
    }
    ready = line == ready_line;
    line.clear();
  }
  close(out[0]);
  if (!ready) {
    stop();
    throw std::runtime_error(argv.front() + " ended before saying '" + ready_line + "'");
  }
}

Background::~Background() { stop(); }

void Background::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Run eziotrace(const std::vector<std::string>& args) {
  std::vector<std::string> argv{EZIO_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

nlohmann::json dump_archive(const std::filesystem::path& anchor) {
  Run r = run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py", anchor.string()});
  if (r.status != 0) {
    ADD_FAILURE() << "python3-otf2 rejects " << anchor << ": " << r.err;
    return {};
  }
  return nlohmann::json::parse(r.out);
}

CallsSeen calls_seen(const nlohmann::json& calls) {
  CallsSeen seen;
  uint64_t last_t0 = 0;
  std::set<uint64_t> ids;
  for (const auto& c : calls) {
    uint64_t t0 = c["t0"];
    if (t0 < last_t0 && seen.out_of_order.empty()) seen.out_of_order = c.dump();
    last_t0 = t0;
    if (!ids.insert(c["call.id"].get<uint64_t>()).second && seen.twice.empty()) {
      seen.twice = c.dump();
    }
    seen.writes += c["name"] == "write" && c["syscall.fd"] != 1;
  }
  return seen;
}

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::path(EZIO_TEST_SCRATCH_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string program(const std::string& name) {
  return (std::filesystem::path(EZIO_TEST_PROGRAM_DIR) / name).string();
}

std::map<uint64_t, uint64_t> pid_of_rank(const std::string& out) {
  std::map<uint64_t, uint64_t> pids;
  const std::regex line(R"(rank=(\d+) pid=(\d+) done)");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    pids[std::stoul((*it)[1])] = std::stoul((*it)[2]);
  }
  return pids;
}

}  // namespace ezio::test
