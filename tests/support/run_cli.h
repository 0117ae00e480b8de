// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Runs a program in a child process with a time limit and captures its output, so that a test
// can tell a clean error exit from a crash or a hang.
#include <string>
#include <vector>

namespace ezio::test {

struct RunResult {
  int exit_code = -1;  // when the child exited
  int signal = 0;      // when it was killed by a signal (SIGKILL after a timeout)
  bool timed_out = false;
  std::string out, err;
};

RunResult run(const std::vector<std::string>& argv, int timeout_seconds = 60);

// The analyzer test driver built next to the tests.
std::string cli_path();

}  // namespace ezio::test
