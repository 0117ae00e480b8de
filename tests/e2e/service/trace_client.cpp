// SPDX-License-Identifier: GPL-2.0-only
// A client of eziotraced that asks for what eziotrace never would, for the security tests:
//   trace_client SOCKET own-child      its own child, waiting before its exec (accepted)
//   trace_client SOCKET exec-child     its own child after the child ran `sleep` (refused)
//   trace_client SOCKET pid PID        any process by pid (refused unless its waiting child)
//   trace_client SOCKET setuid-child UID  (root) its child, now running as UID (refused)
//   trace_client SOCKET hello-wait     opens a session, prints "open", waits to be killed
//   trace_client SOCKET connections N  holds N connections, then asks for a session on one more
// Prints "accepted" or "refused: <the service's message>"; exit status 0 either way.
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "recorder/service/client.h"

using ezio::recorder::service::ServiceClient;

namespace {

// A child that waits for a byte on a pipe (or is killed), then runs `then` (exec or exit).
pid_t waiting_child(int& release_fd, bool exec_sleep, uid_t become) {
  int p[2];
  if (pipe(p) != 0) throw ezio::Error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    close(p[1]);
    if (become && setresuid(become, become, become) != 0) _exit(3);
    if (exec_sleep) execlp("sleep", "sleep", "30", nullptr);
    char c;
    (void)!read(p[0], &c, 1);
    _exit(0);
  }
  close(p[0]);
  release_fd = p[1];
  return pid;
}

ino_t exe_inode(pid_t pid) {
  struct stat st {};
  stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &st);
  return st.st_ino;
}

// Until the child has exec'd (its executable is no longer ours).
void wait_for_exec(pid_t pid) {
  for (int i = 0; i < 500 && exe_inode(pid) == exe_inode(getpid()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int try_trace(ServiceClient& client, pid_t pid) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) throw ezio::Error("pidfd_open failed");
  try {
    client.trace(pid, pidfd);
    std::printf("accepted\n");
  } catch (const ezio::Error& e) {
    std::printf("refused: %s\n", e.what());
  }
  close(pidfd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::string mode = argv[2];
  try {
    if (mode == "connections" && argc > 3) {
      std::vector<std::unique_ptr<ServiceClient>> held;
      for (int i = 0; i < std::stoi(argv[3]); ++i) {
        held.push_back(std::make_unique<ServiceClient>(argv[1]));
      }
      ServiceClient(argv[1]).hello(1 << 20);
      std::printf("accepted\n");
      return 0;
    }
    ServiceClient client(argv[1]);
    client.hello(1 << 20);
    if (mode == "hello-wait") {
      std::printf("open\n");
      std::fflush(stdout);
      pause();
    }
    if (mode == "pid" && argc > 3) return try_trace(client, std::stoi(argv[3]));
    int release = -1;
    bool exec_first = mode == "exec-child";
    uid_t become = mode == "setuid-child" && argc > 3 ? std::stoi(argv[3]) : 0;
    pid_t child = waiting_child(release, exec_first, become);
    if (exec_first) wait_for_exec(child);
    if (become) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int r = try_trace(client, child);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return r;
  } catch (const ezio::Error& e) {
    std::printf("refused: %s\n", e.what());
    return 0;
  }
}
