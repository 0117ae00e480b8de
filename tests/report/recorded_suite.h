#pragma once
// A test suite sharing one private ext4 loop device, recording workloads on it with eziotrace.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "loop_fs.h"
#include "run.h"

namespace ezio::test {

class RecordedSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fs_ = new LoopFs("ext4"); }
  static void TearDownTestSuite() {
    delete fs_;
    fs_ = nullptr;
  }

  // A fresh directory on the loop device for a workload's files.
  static std::filesystem::path data_dir(const std::string& name) {
    std::filesystem::path d = *fs_ / name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }

  // Records `command` (kernel only, or merged with EZTrace) into a fresh archive; its anchor.
  // `options` go to the recorder.
  static std::filesystem::path record(const std::vector<std::string>& command,
                                      const std::string& name, bool with_eztrace,
                                      const std::vector<std::string>& options = {}) {
    std::filesystem::path out = scratch_dir("recorded-" + name) / "trace";
    std::vector<std::string> argv{EZIO_BINARY};
    if (!with_eztrace) argv.push_back("record");
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-f", "-o", out.string(), "--"});
    argv.insert(argv.end(), command.begin(), command.end());
    ezio::test::Run r = run(argv);
    if (r.status != 0) throw std::runtime_error("recording " + name + " failed: " + r.err);
    return out / "eziotrace.otf2";
  }

  static inline LoopFs* fs_ = nullptr;
};

}  // namespace ezio::test
