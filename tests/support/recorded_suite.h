// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A test suite sharing one private ext4 loop device, recording workloads on it with eziotrace.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "loop_fs.h"
#include "run.h"

namespace ezio::test {

// A sysfs setting changed for one test and restored by the destructor, whatever the test did.
// `through`, when given, is the file written instead: another view of the same setting (a BDI's
// max_bytes is its max_ratio_fine in bytes of the memory of the moment, which is what restores).
class SysfsSetting {
 public:
  SysfsSetting(std::filesystem::path file, const std::string& value,
               const std::filesystem::path& through = {})
      : file_(std::move(file)) {
    std::ifstream in(file_);
    if (!std::getline(in, old_)) throw std::runtime_error("cannot read " + file_.string());
    // A scheduler list reads "none [mq-deadline] bfq": the bracketed one is the setting.
    if (auto open = old_.find('['); open != std::string::npos)
      old_ = old_.substr(open + 1, old_.find(']') - open - 1);
    write(through.empty() ? file_ : through, value);
  }
  ~SysfsSetting() {
    try {
      write(file_, old_);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  SysfsSetting(const SysfsSetting&) = delete;
  SysfsSetting& operator=(const SysfsSetting&) = delete;

 private:
  static void write(const std::filesystem::path& file, const std::string& v) {
    std::ofstream out(file);
    out << v << std::flush;
    if (!out) throw std::runtime_error("cannot write " + v + " to " + file.string());
  }
  std::filesystem::path file_;
  std::string old_;
};

// A device's dirty pages limited to `bytes`, enforced even below the global limits
// (strict_limit): a writer faster than the device's write-back is throttled. Restored after.
class DirtyLimit {
 public:
  DirtyLimit(const std::filesystem::path& bdi, uint64_t bytes)
      : strict_(bdi / "strict_limit", "1"),
        max_(bdi / "max_ratio_fine", std::to_string(bytes), bdi / "max_bytes") {}

 private:
  SysfsSetting strict_, max_;
};

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

  static std::filesystem::path block_dir() {
    return std::filesystem::path("/sys/block") / fs_->device();
  }
  // /sys/class/bdi/<major:minor>: the device's dirty-page limits and readahead.
  static std::filesystem::path bdi_dir() {
    std::ifstream in(block_dir() / "dev");
    std::string dev;
    if (!(in >> dev)) throw std::runtime_error("no dev number for " + fs_->device());
    return std::filesystem::path("/sys/class/bdi") / dev;
  }

  static inline LoopFs* fs_ = nullptr;
};

}  // namespace ezio::test
