// SPDX-License-Identifier: GPL-2.0-only
// Cost of the syscall hooks per call: times 1-byte write()s to /dev/null, the cheapest hooked call
// there is, in batches, and prints the fastest batch's time per call, the one the host's noise left
// alone (this VM's wall times drift by tens of percent; the fastest of 400 batches does not). A
// pause after each batch keeps the rate (~1 M calls/s) within what the recorder drains without
// loss: a dropped event costs less than a recorded one, and would flatter the figure.
//   hook_cost            time the calls
//   hook_cost --floor    the same with hook_floor.bpf.c's empty programs attached
//   hook_cost --getppid  time getppid() instead (with --floor too): a syscall never recorded
//   hook_cost --hold     attach the empty programs, say "ready", keep them until stdin closes
//                        (bench/metrics/run.py's floor, under another workload)
//   hook_cost --switches ns per context switch: two processes on one CPU pass a byte back and
//                        forth through pipes (two switches and four 1-byte calls per round trip)
//   hook_cost --write-file DIR  4 KiB buffered write()s appending to a file in DIR: each call
//                        inserts a page into the page cache and dirties it (the page-cache and
//                        FS layers' per-page hooks fire); the file is truncated between batches
//   hook_cost --read-file DIR   4 KiB pread()s of one cached page of a file in DIR (the read
//                        path's page-cache lookup, no I/O)
//   (--floor goes with any of these but --switches)
#include <fcntl.h>
#include <fmt/core.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"
#include "hook_floor.skel.h"

namespace {

constexpr int kBatches = 400;
constexpr int kCallsPerBatch = 5000;
constexpr useconds_t kPauseUs = 3000;

double now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// getppid instead of the writes (--getppid): a syscall eziotrace never records, whose cost
// shows what the syscall layer's hooks take from every other syscall of the node.
bool time_getppid = false;

double fastest_call_ns() {
  ezio::UniqueFd fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
  if (!fd) ezio::fail("cannot open /dev/null: {}", ezio::errno_text(errno));
  char byte = 0;
  double best = 1e18;
  for (int b = 0; b < kBatches; ++b) {
    double t0 = now_ns();
    for (int i = 0; i < kCallsPerBatch; ++i) {
      if (time_getppid) {
        syscall(SYS_getppid);  // not getppid(): a libc could answer it without the kernel
      } else if (write(fd.get(), &byte, 1) != 1) {
        ezio::fail("write: {}", ezio::errno_text(errno));
      }
    }
    best = std::min(best, (now_ns() - t0) / kCallsPerBatch);
    usleep(kPauseUs);
  }
  return best;
}

// A file's calls cost a few µs: fewer per batch keeps a batch short enough for the fastest one to
// be free of the host's noise, and the pages a batch dirties (4 MiB) far below any writeback
// threshold, so that no batch meets throttling or the flusher.
constexpr int kFileCallsPerBatch = 1000;
constexpr size_t kPage = 4096;

ezio::UniqueFd open_bench_file(const std::string& dir) {
  std::string path = dir + "/hook_cost.data";
  ezio::UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) ezio::fail("cannot create {}: {}", path, ezio::errno_text(errno));
  unlink(path.c_str());  // nothing left behind, whatever the exit
  return fd;
}

// Appends: every call lands on a page not in the cache, which it adds and dirties (the worst
// case of a buffered write, the one the per-page hooks are paid on). The truncation between
// batches drops the pages, dirty as they are, so nothing is ever written back.
double fastest_file_write_ns(const std::string& dir) {
  ezio::UniqueFd fd = open_bench_file(dir);
  std::vector<char> page(kPage, 'w');
  double best = 1e18;
  for (int b = 0; b < kBatches; ++b) {
    double t0 = now_ns();
    for (int i = 0; i < kFileCallsPerBatch; ++i) {
      if (write(fd.get(), page.data(), kPage) != static_cast<ssize_t>(kPage)) {
        ezio::fail("write: {}", ezio::errno_text(errno));
      }
    }
    best = std::min(best, (now_ns() - t0) / kFileCallsPerBatch);
    if (ftruncate(fd.get(), 0) != 0 || lseek(fd.get(), 0, SEEK_SET) != 0) {
      ezio::fail("truncate: {}", ezio::errno_text(errno));
    }
    usleep(kPauseUs);
  }
  return best;
}

// The same cached page again and again: a read that only looks the page up and copies it.
double fastest_file_read_ns(const std::string& dir) {
  ezio::UniqueFd fd = open_bench_file(dir);
  std::vector<char> page(kPage, 'r');
  if (pwrite(fd.get(), page.data(), kPage, 0) != static_cast<ssize_t>(kPage)) {
    ezio::fail("write: {}", ezio::errno_text(errno));
  }
  double best = 1e18;
  for (int b = 0; b < kBatches; ++b) {
    double t0 = now_ns();
    for (int i = 0; i < kFileCallsPerBatch; ++i) {
      if (pread(fd.get(), page.data(), kPage, 0) != static_cast<ssize_t>(kPage)) {
        ezio::fail("pread: {}", ezio::errno_text(errno));
      }
    }
    best = std::min(best, (now_ns() - t0) / kFileCallsPerBatch);
    usleep(kPauseUs);
  }
  return best;
}

// Both ends of the ping-pong on one CPU, so that every hand-over is a context switch (on two CPUs
// the other end may be spinning awake already).
void pin_to_first_cpu() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    ezio::fail("cannot pin to CPU 0: {}", ezio::errno_text(errno));
  }
}

// The child's end: sends back each byte it gets until the parent closes its pipe.
[[noreturn]] void echo_until_eof(int in, int out) {
  char byte;
  while (read(in, &byte, 1) == 1) {
    if (write(out, &byte, 1) != 1) _exit(1);
  }
  _exit(0);
}

double fastest_switch_ns() {
  constexpr int kRoundTrips = 1000;
  // Four traced calls per round trip at ~3 us each: a longer pause than the writes' keeps the
  // traced rate within what the recorder drains.
  constexpr useconds_t kSwitchPauseUs = 20000;
  int to_child[2], to_parent[2];
  if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(to_parent, O_CLOEXEC) != 0) {
    ezio::fail("pipe: {}", ezio::errno_text(errno));
  }
  ezio::UniqueFd child_in(to_child[0]), parent_out(to_child[1]);
  ezio::UniqueFd parent_in(to_parent[0]), child_out(to_parent[1]);
  pin_to_first_cpu();  // inherited by the child
  pid_t pid = fork();
  if (pid < 0) ezio::fail("fork: {}", ezio::errno_text(errno));
  if (pid == 0) {
    parent_out.reset();
    parent_in.reset();
    echo_until_eof(child_in.get(), child_out.get());
  }
  child_in.reset();
  child_out.reset();
  char byte = 0;
  double best = 1e18;
  for (int b = 0; b < kBatches; ++b) {
    double t0 = now_ns();
    for (int i = 0; i < kRoundTrips; ++i) {
      if (write(parent_out.get(), &byte, 1) != 1 || read(parent_in.get(), &byte, 1) != 1) {
        ezio::fail("ping-pong: {}", ezio::errno_text(errno));
      }
    }
    best = std::min(best, (now_ns() - t0) / (2 * kRoundTrips));
    usleep(kSwitchPauseUs);
  }
  parent_out.reset();  // the child's read sees the end of the pipe
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ezio::fail("the echoing child failed");
  return best;
}

struct FloorDeleter {
  void operator()(hook_floor* s) const { hook_floor__destroy(s); }
};

std::unique_ptr<hook_floor, FloorDeleter> attach_empty_programs() {
  std::unique_ptr<hook_floor, FloorDeleter> skel(hook_floor__open_and_load());
  if (!skel) ezio::fail("cannot load the empty BPF programs: {}", ezio::errno_text(errno));
  if (int err = hook_floor__attach(skel.get())) {
    ezio::fail("cannot attach the empty BPF programs: {}", ezio::errno_text(-err));
  }
  return skel;
}

void hold_empty_programs() {
  auto skel = attach_empty_programs();
  fmt::print("ready\n");
  std::fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times 1-byte writes to /dev/null (the hooks' cost per call)"};
  bool floor = false;
  app.add_flag("--floor", floor, "attach empty programs to the syscall tracepoints first");
  bool switches = false;
  app.add_flag("--switches", switches,
               "time context switches (a pipe ping-pong on one CPU) instead of writes");
  app.add_flag("--getppid", time_getppid,
               "time getppid() (a syscall eziotrace does not record) instead of writes");
  bool hold = false;
  app.add_flag("--hold", hold, "attach the empty programs and keep them until stdin closes");
  std::string write_dir, read_dir;
  app.add_option("--write-file", write_dir,
                 "time 4 KiB buffered writes appending to a file in this directory instead");
  app.add_option("--read-file", read_dir,
                 "time 4 KiB reads of a cached page of a file in this directory instead");
  CLI11_PARSE(app, argc, argv);
  try {
    if (hold) {
      hold_empty_programs();
      return 0;
    }
    std::unique_ptr<hook_floor, FloorDeleter> empty;
    if (floor) empty = attach_empty_programs();
    double ns = switches             ? fastest_switch_ns()
                : !write_dir.empty() ? fastest_file_write_ns(write_dir)
                : !read_dir.empty()  ? fastest_file_read_ns(read_dir)
                                     : fastest_call_ns();
    fmt::print("{:.1f}\n", ns);
  } catch (const ezio::Error& e) {
    fmt::print(stderr, "hook_cost: {}\n", e.what());
    return e.exit_code();
  }
  return 0;
}
