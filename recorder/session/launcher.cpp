// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <tuple>

#include "common/error.h"

extern char** environ;

namespace ezio::recorder {
namespace {

// Stages the child reports through the error pipe, with errno.
enum Stage : int { kIdentity = 1, kExec = 2 };

void write_all(int fd, const void* buf, size_t n) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= w;
  }
}

[[noreturn]] void child_fail(int error_fd, Stage stage, int err, int status) {
  int msg[2] = {stage, err};
  write_all(error_fd, msg, sizeof(msg));
  _exit(status);
}

// The child's ends of the gate's pipes (kGated), or -1.
struct GateEnds {
  int gate = -1, report = -1;
};

// Runs in the forked child: only async-signal-safe calls, and no I/O of its own before the exec
// except the pipes (the child is not traced until it execs). Held (go_fd >= 0) until released.
[[noreturn]] void run_child(char* const* argv, char* const* envp, const TargetUser& user, int go_fd,
                            int error_fd, GateEnds gate) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD})
    sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  if (user.drop) {
    if (setgroups(user.groups.size(), user.groups.data()) != 0 || setgid(user.gid) != 0 ||
        setuid(user.uid) != 0) {
      child_fail(error_fd, kIdentity, errno, 126);
    }
  }
  // The gate's ends stay open across the exec, for the preload helper.
  for (int fd : {gate.gate, gate.report}) {
    if (fd >= 0 && fcntl(fd, F_SETFD, 0) != 0) child_fail(error_fd, kExec, errno, 126);
  }
  char go = 0;
  ssize_t r = 1;
  while (go_fd >= 0 && (r = read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  if (r != 1) _exit(125);  // the recorder went away before releasing us
  execvpe(argv[0], argv, envp);
  int err = errno;
  child_fail(error_fd, kExec, err, err == ENOENT ? 127 : 126);
}

// Both ends close-on-exec: the child's exec closes its ends, which is how release() learns of it.
std::pair<UniqueFd, UniqueFd> make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) fail("cannot create the launch pipes: {}", errno_text(errno));
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The gate's channel: a socket, so that opening a gate whose program already ended is EPIPE
// (MSG_NOSIGNAL), not a SIGPIPE that kills the recorder. Both ends close-on-exec, as make_pipe's.
std::pair<UniqueFd, UniqueFd> make_socket_pair() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    fail("cannot create the start gate: {}", errno_text(errno));
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace

std::vector<std::string> current_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return env;
}

Launcher::Launcher(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const TargetUser& user, Start start) {
  if (argv.empty()) fail("no command to run");
  name_ = argv[0];
  // Owned from the start, so that a failed later pipe or fork closes the first ones.
  bool gated = start == Start::kGated;
  UniqueFd go_read, go_write, gate_read, gate_write, report_read, report_write;
  if (gated) {
    std::tie(gate_read, gate_write) = make_socket_pair();
    std::tie(report_read, report_write) = make_pipe();
  } else {
    std::tie(go_read, go_write) = make_pipe();
  }
  auto [error_read, error_write] = make_pipe();
  // Built before fork: the child may not allocate.
  std::string gate_var =
      fmt::format("EZIOTRACE_GATE={},{},{}", gate_read.get(), report_write.get(), getpid());
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) {
    if (e.rfind("EZIOTRACE_GATE=", 0) != 0) cenv.push_back(const_cast<char*>(e.c_str()));
  }
  if (gated) cenv.push_back(gate_var.data());
  cenv.push_back(nullptr);

  pid_ = fork();
  if (pid_ < 0) fail("cannot fork: {}", errno_text(errno));
  if (pid_ == 0) {
    // The parent's ends: holding the go pipe's (or the gate's) write end would keep the child from
    // seeing EOF when the recorder dies before releasing it.
    go_write.reset();
    gate_write.reset();
    report_read.reset();
    error_read.reset();
    run_child(cargv.data(), cenv.data(), user, go_read.get(), error_write.get(),
              {gate_read.get(), report_write.get()});
  }
  // glibc 2.36 declares pidfd_open() without C linkage for C++: the system call directly.
  exit_fd_ = UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid_, 0)));
  if (!exit_fd_) {
    int err = errno;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    fail("cannot watch the application's process (pidfd_open): {}", errno_text(err));
  }
  go_fd_ = std::move(go_write);
  error_fd_ = std::move(error_read);
  gate_fd_ = std::move(gate_write);
  report_fd_ = std::move(report_read);
  if (report_fd_ && fcntl(report_fd_.get(), F_SETFL, O_NONBLOCK) != 0) {
    fail("cannot set up the start gate: {}", errno_text(errno));
  }
}

Launcher::~Launcher() {
  if (pid_ > 0 && !exited_) {
    // Only reached when recording failed before the application could run to its end.
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void Launcher::release() {
  char go = 1;
  write_all(go_fd_.get(), &go, 1);
  go_fd_.reset();
  confirm_exec();
}

void Launcher::confirm_exec() {
  if (!error_fd_) return;
  int msg[2];
  ssize_t n;
  do {
    n = read(error_fd_.get(), msg, sizeof(msg));
  } while (n < 0 && errno == EINTR);
  error_fd_.reset();
  if (n != sizeof(msg)) return;  // EOF: the exec succeeded and closed the pipe
  int status = 0;
  waitpid(pid_, &status, 0);
  exited_ = true;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 126;
  if (msg[0] == kIdentity) {
    fail_with(code, "cannot run the command as the invoking user: {}", errno_text(msg[1]));
  }
  if (msg[1] == ENOENT) fail_with(code, "{}: command not found", name_);
  fail_with(code, "cannot execute {}: {}", name_, errno_text(msg[1]));
}

void Launcher::open_gate() {
  char go = 1;
  ssize_t r;
  while ((r = send(gate_fd_.get(), &go, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  // Not sent (EPIPE): the program ended before the gate; poll_exit() tells how.
  gate_fd_.reset();
}

bool Launcher::gate_reached() {
  // 'G' and the time, written at once by the helper (converters/eztrace/preload).
  char reached[1 + sizeof(uint64_t)] = {};
  if (!gate_reached_ && report_fd_ &&
      read(report_fd_.get(), reached, sizeof reached) == sizeof reached && reached[0] == 'G') {
    gate_reached_ = true;
    std::memcpy(&gate_reached_ns_, reached + 1, sizeof gate_reached_ns_);
  }
  return gate_reached_;
}

std::optional<int> Launcher::poll_exit() {
  if (exited_) return std::nullopt;
  int status = 0;
  rusage usage{};
  pid_t r = wait4(pid_, &status, WNOHANG, &usage);
  if (r != pid_) return std::nullopt;
  exited_ = true;
  auto ns = [](const timeval& t) { return uint64_t(t.tv_sec) * 1'000'000'000 + t.tv_usec * 1000; };
  cpu_ns_ = ns(usage.ru_utime) + ns(usage.ru_stime);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    ended_ = fmt::format("killed by SIG{}", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    // The signals a fault of the program itself raises (they dump core by default); not those
    // another process or the recorder sends (SIGINT, SIGTERM, SIGKILL, SIGQUIT...).
    crashed_ = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
               sig == SIGABRT || sig == SIGSYS || sig == SIGTRAP;
    return 128 + sig;
  }
  int code = WEXITSTATUS(status);
  ended_ = fmt::format("exit status {}", code);
  return code;
}

void Launcher::signal(int sig) {
  if (pid_ > 0 && !exited_) kill(pid_, sig);
}

}  // namespace ezio::recorder
