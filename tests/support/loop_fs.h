// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A private file system on a private loop device for one test: image in a temporary directory,
// losetup, mkfs, mount; all undone in the destructor, whatever the test did.
#include <filesystem>
#include <string>
#include <vector>

namespace ezio::test {

class LoopFs {
 public:
  // fstype: ext4, ext4-nojournal, xfs, btrfs, or raw (no file system, nothing mounted). Throws
  // (failing the test) when a precondition is missing: not root, no loop device, no mkfs.
  explicit LoopFs(const std::string& fstype);
  ~LoopFs();
  LoopFs(const LoopFs&) = delete;
  LoopFs& operator=(const LoopFs&) = delete;

  const std::filesystem::path& mount_point() const { return mnt_; }
  // Unmounts and mounts again: the file system's pages leave the page cache, the next reads are
  // cold.
  void remount();
  const std::string& device() const { return dev_; }  // "loop3"
  std::filesystem::path operator/(const std::string& s) const { return mnt_ / s; }

 private:
  void setup(const std::string& fstype);
  void mount();
  void teardown();
  std::filesystem::path dir_, img_, mnt_;
  std::string dev_, fstype_;
  bool attached_ = false, mounted_ = false;
};

// Runs argv; throws with its output when it fails.
std::string must_run(const std::vector<std::string>& argv);

}  // namespace ezio::test
