// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/slurm_user_lookups.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>

#include "common/error.h"
#include "recorder/service/epoll_watch.h"
#include "recorder/service/slurm_jobs.h"

// glibc 2.36's header declares its functions without C linkage.
extern "C" {
#include <sys/pidfd.h>
}

extern char** environ;

namespace ezio::recorder::service {

namespace {

// scontrol's `show job -o` is one line of a few hundred bytes: more is not kept.
constexpr size_t kMaxOutput = 64 << 10;

// A posix_spawn setting, destroyed with its scope.
template <typename T, int (*init)(T*), int (*destroy)(T*)>
struct SpawnSetting {
  T a;
  SpawnSetting() { init(&a); }
  ~SpawnSetting() { destroy(&a); }
  SpawnSetting(const SpawnSetting&) = delete;
  SpawnSetting& operator=(const SpawnSetting&) = delete;
};
using SpawnActions = SpawnSetting<posix_spawn_file_actions_t, posix_spawn_file_actions_init,
                                  posix_spawn_file_actions_destroy>;
using SpawnAttr = SpawnSetting<posix_spawnattr_t, posix_spawnattr_init, posix_spawnattr_destroy>;

// The service blocks SIGTERM and SIGINT (its signalfd) and ignores SIGPIPE, which a child would
// inherit across its exec: scontrol gets the default ones.
void default_signals(SpawnAttr& attr) {
  sigset_t none, reset;
  sigemptyset(&none);
  sigemptyset(&reset);
  for (int s : {SIGPIPE, SIGTERM, SIGINT}) sigaddset(&reset, s);
  posix_spawnattr_setsigmask(&attr.a, &none);
  posix_spawnattr_setsigdefault(&attr.a, &reset);
  posix_spawnattr_setflags(&attr.a, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

// A started process, killed and reaped when destroyed before it was reaped: no child outlives its
// lookup, none is left a zombie.
struct Process {
  UniqueFd pidfd;
  bool reaped = false;
  explicit Process(UniqueFd fd) : pidfd(std::move(fd)) {}
  ~Process() {
    if (reaped) return;
    (void)pidfd_send_signal(pidfd.get(), SIGKILL, nullptr, 0);
    siginfo_t si{};
    while (waitid(idtype_t(P_PIDFD), id_t(pidfd.get()), &si, WEXITED) != 0 && errno == EINTR) {
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
};

// How a reaped child ended: "" for exit status 0, else what it was.
std::string end_of(const siginfo_t& si) {
  if (si.si_code == CLD_EXITED) {
    return si.si_status == 0 ? "" : fmt::format("exit status {}", si.si_status);
  }
  return fmt::format("killed by signal {}", si.si_status);
}

}  // namespace

// One `scontrol show job -o ID`: its output read as it comes, its end seen by its pidfd.
class SlurmUserLookups::Child {
 public:
  Child(const std::string& scontrol, std::string job, uint64_t deadline, int epoll)
      : id(std::move(job)), deadline_ns(deadline), process_(spawn(scontrol)) {
    watch(epoll, process_.pidfd.get());
    watch(epoll, out_.get());
  }
  const std::string id;
  const uint64_t deadline_ns;
  bool wanted = true;  // false once killed or cancelled: reaped without an answer

  // Reads what is there; at its end the pipe is closed (which takes it out of the epoll set).
  void read_output() {
    char buf[4096];
    while (out_) {
      ssize_t n = read(out_.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;  // a process it started may hold the pipe: no wait
      if (n <= 0) return out_.reset();
      text_.append(buf, std::min(size_t(n), kMaxOutput - std::min(kMaxOutput, text_.size())));
    }
  }
  // How it ended ("" exit status 0, else what it was) once it did (reaped now), else nothing.
  std::optional<std::string> reap() {
    siginfo_t si{};
    if (waitid(idtype_t(P_PIDFD), id_t(process_.pidfd.get()), &si, WEXITED | WNOHANG) != 0) {
      if (errno == EINTR) return std::nullopt;
      process_.reaped = true;  // not ours to wait for any more (ECHILD): ended all the same
      return fmt::format("not waited for: {}", errno_text(errno));
    }
    if (si.si_pid == 0) return std::nullopt;
    process_.reaped = true;
    return end_of(si);
  }
  // SIGKILL; its output is not read any more.
  void kill() {
    (void)pidfd_send_signal(process_.pidfd.get(), SIGKILL, nullptr, 0);
    out_.reset();
    wanted = false;
  }
  const std::string& output() const { return text_; }

 private:
  // Started with its output into out_ (stdout and stderr: the log then says why a job has no
  // user), its stdin /dev/null.
  Process spawn(const std::string& scontrol) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) fail("pipe2: {}", errno_text(errno));
    UniqueFd read_end(p[0]), write_end(p[1]);
    if (fcntl(read_end.get(), F_SETFL, O_NONBLOCK) != 0) fail("fcntl: {}", errno_text(errno));
    SpawnActions fa;
    posix_spawn_file_actions_addopen(&fa.a, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa.a, write_end.get(), 1);
    posix_spawn_file_actions_adddup2(&fa.a, write_end.get(), 2);
    // Nothing of the service's: the socket systemd passed (fd 3) is not close-on-exec.
    posix_spawn_file_actions_addclosefrom_np(&fa.a, 3);
    SpawnAttr attr;
    default_signals(attr);
    const char* argv[] = {scontrol.c_str(), "show", "job", "-o", id.c_str(), nullptr};
    pid_t pid = 0;
    if (int err =
            posix_spawnp(&pid, argv[0], &fa.a, &attr.a, const_cast<char* const*>(argv), environ)) {
      fail("cannot run {}: {}", scontrol, errno_text(err));
    }
    UniqueFd pidfd(pidfd_open(pid, 0));
    if (!pidfd) {
      int err = errno;
      ::kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      fail("pidfd_open: {}", errno_text(err));
    }
    out_ = std::move(read_end);
    return Process(std::move(pidfd));
  }

  UniqueFd out_;  // set by spawn(), which process_'s initializer calls: declared before it
  Process process_;
  std::string text_;
};

SlurmUserLookups::SlurmUserLookups(std::string scontrol, uint64_t timeout_ns)
    : scontrol_(std::move(scontrol)),
      timeout_ns_(timeout_ns),
      epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_) fail("epoll_create1: {}", errno_text(errno));
}

SlurmUserLookups::~SlurmUserLookups() = default;

void SlurmUserLookups::start(const std::string& id, uint64_t now_ns) {
  if (children_.size() >= kMaxChildren) {
    waiting_.push_back({id, now_ns + timeout_ns_});
    return;
  }
  children_.push_back(std::make_unique<Child>(scontrol_, id, now_ns + timeout_ns_, epoll_.get()));
}

void SlurmUserLookups::cancel(const std::string& id) {
  for (auto& c : children_) {
    if (c->wanted && c->id == id) c->kill();
  }
  std::erase_if(waiting_, [&](const Waiting& w) { return w.id == id; });
}

void SlurmUserLookups::run_waiting(std::vector<Answer>& answers) {
  while (children_.size() < kMaxChildren && !waiting_.empty()) {
    Waiting w = std::move(waiting_.front());
    waiting_.pop_front();
    try {
      children_.push_back(std::make_unique<Child>(scontrol_, w.id, w.deadline_ns, epoll_.get()));
    } catch (const Error& e) {
      answers.push_back({w.id, std::nullopt, e.what()});
    }
  }
}

std::vector<SlurmUserLookups::Answer> SlurmUserLookups::on_ready() {
  // Each child is looked at (there are few): which of its fds woke the set does not matter.
  std::vector<Answer> answers;
  std::erase_if(children_, [&](std::unique_ptr<Child>& c) {
    c->read_output();
    std::optional<std::string> end = c->reap();
    if (!end) return false;
    c->read_output();  // what it wrote last
    if (!c->wanted) return true;
    Answer a{c->id, std::nullopt, ""};
    if (end->empty()) a.uid = scontrol_user_id(c->output());
    if (!a.uid) {
      std::string said = c->output().substr(0, 300);
      while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
      a.why = fmt::format("`{} show job -o {}`{}: {}", scontrol_, c->id,
                          end->empty() ? " names no user" : " failed, " + *end,
                          said.empty() ? "no output" : said);
    }
    answers.push_back(std::move(a));
    return true;
  });
  run_waiting(answers);
  return answers;
}

std::vector<SlurmUserLookups::Answer> SlurmUserLookups::expire(uint64_t now_ns) {
  std::vector<Answer> answers;
  for (auto& c : children_) {
    if (!c->wanted || now_ns < c->deadline_ns) continue;
    answers.push_back({c->id, std::nullopt,
                       fmt::format("`{} show job -o {}` did not answer within {:g} s: killed",
                                   scontrol_, c->id, double(timeout_ns_) / 1e9)});
    c->kill();
  }
  std::erase_if(waiting_, [&](const Waiting& w) {
    if (now_ns < w.deadline_ns) return false;
    answers.push_back({w.id, std::nullopt,
                       fmt::format("`{} show job -o {}` did not get its turn within {:g} s ({} "
                                   "lookups ran)",
                                   scontrol_, w.id, double(timeout_ns_) / 1e9, kMaxChildren)});
    return true;
  });
  return answers;
}

}  // namespace ezio::recorder::service
