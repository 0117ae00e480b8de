// SPDX-License-Identifier: GPL-2.0-only
#include "loop_fs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <stdexcept>

#include "run.h"

namespace ezio::test {

std::string must_run(const std::vector<std::string>& argv) {
  Run r = run(argv);
  if (r.status != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += a + " ";
    throw std::runtime_error("`" + cmd + "` failed (" + std::to_string(r.status) + "): " + r.err +
                             r.out);
  }
  return r.out;
}

LoopFs::LoopFs(const std::string& fstype) {
  if (geteuid() != 0) throw std::runtime_error("a loop device needs root (losetup, mount)");
  try {
    setup(fstype);
  } catch (...) {
    teardown();
    throw;
  }
}

void LoopFs::setup(const std::string& fstype) {
  static int serial = 0;
  fstype_ = fstype;
  dir_ = scratch_dir(fmt::format("loop-{}-{}-{}", fstype, getpid(), serial++));
  img_ = dir_ / "fs.img";
  mnt_ = dir_ / "mnt";
  std::filesystem::create_directories(mnt_);
  // xfs refuses file systems under 300 MB since xfsprogs 5.19.
  must_run({"truncate", "-s", fstype == "xfs" ? "512M" : "256M", img_.string()});
  std::string dev = must_run({"losetup", "--find", "--show", img_.string()});
  while (!dev.empty() && (dev.back() == '\n' || dev.back() == ' ')) dev.pop_back();
  if (dev.rfind("/dev/", 0) != 0) throw std::runtime_error("losetup gave no device: " + dev);
  attached_ = true;
  dev_ = dev.substr(5);
  if (fstype == "raw") return;  // the bare device, for tests that write it themselves
  if (fstype == "ext4" || fstype == "ext4-nojournal") {
    // No lazy initialisation: ext4lazyinit would write in the background during the tests.
    std::vector<std::string> mkfs{"mkfs.ext4", "-q", "-F", "-E",
                                  "lazy_itable_init=0,lazy_journal_init=0"};
    // Without a journal, metadata goes out through the block device's own page cache, written
    // back by whoever syncs: no jbd2 thread takes it off the processes' hands.
    if (fstype == "ext4-nojournal") mkfs.insert(mkfs.end(), {"-O", "^has_journal"});
    mkfs.push_back(dev);
    must_run(mkfs);
  } else if (fstype == "xfs") {
    must_run({"mkfs.xfs", "-q", "-f", dev});
  } else if (fstype == "btrfs") {
    must_run({"mkfs.btrfs", "-q", "-f", dev});
  } else {
    throw std::runtime_error("unknown file system " + fstype);
  }
  mount();
  must_run({"chmod", "0777", mnt_.string()});
}

void LoopFs::mount() {
  // ext4's mount queues a prefetch of the block bitmaps for ext4lazyinit, which reads them up to
  // 5 s after the mount (a random delay): reads of no process's, which a test that counts the
  // device's requests would see on the device and not in what it checks (docs/kernel-layers.md,
  // "The device's own counters").
  std::string options = "noatime";
  if (fstype_.starts_with("ext4")) options += ",no_prefetch_block_bitmaps";
  must_run({"mount", "-o", options, "/dev/" + dev_, mnt_.string()});
  mounted_ = true;
}

void LoopFs::remount() {
  must_run({"umount", mnt_.string()});
  mounted_ = false;
  mount();
}

LoopFs::~LoopFs() { teardown(); }

void LoopFs::teardown() {
  if (mounted_) {
    // A process the test killed may still hold a file open for a moment.
    for (int i = 0; i < 50 && run({"umount", mnt_.string()}).status != 0; ++i) usleep(100 * 1000);
    run({"umount", "-l", mnt_.string()});
    mounted_ = false;
  }
  if (attached_) {
    run({"losetup", "-d", "/dev/" + dev_});
    attached_ = false;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace ezio::test
