// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Test helpers: run a program and capture what it prints; read an archive through python3-otf2.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ezio::test {

struct Run {
  int status = -1;  // as a shell reports it: exit code, or 128+signal
  std::string out;  // stdout
  std::string err;  // stderr
  // Peak resident set size of the program, or of the largest of its descendants it waited for
  // (wait4's ru_maxrss), in KiB.
  long max_rss_kb = 0;
};

// Runs argv (no shell), with extra environment entries; stdin is /dev/null.
Run run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
// argv (no shell) running beside the test until this object is destroyed (then killed). With
// ready_line, the constructor returns once the program has printed that line on its stdout (its
// set-up is done), and throws if it ends first.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv, const std::string& ready_line = "");
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  pid_t pid() const { return pid_; }

 private:
  void stop();
  pid_t pid_ = -1;
};

// Runs `eziotrace args...`.
Run eziotrace(const std::vector<std::string>& args);
// The archive as tests/support/otf2_dump.py sees it; fails the test if the reader rejects it.
nlohmann::json dump_archive(const std::filesystem::path& anchor);
// The calls of one location of dump_archive's: its writes (to any fd but stdout), whether they
// are in time order (t0) and each once (call.id), with the first call that is not.
struct CallsSeen {
  int writes = 0;
  std::string out_of_order, twice;  // "": none
};
CallsSeen calls_seen(const nlohmann::json& calls);
// A fresh empty directory under the build tree, removed at the end of the test program.
std::filesystem::path scratch_dir(const std::string& name);
// The whole content of a file ("" when it cannot be read).
std::string read_text(const std::filesystem::path& path);
// The pid of each rank, from the "rank=R pid=P done" lines the MPI test programs print at the end.
std::map<uint64_t, uint64_t> pid_of_rank(const std::string& out);
// Path of a test program built next to the tests.
std::string program(const std::string& name);

}  // namespace ezio::test
