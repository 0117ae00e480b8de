// SPDX-License-Identifier: GPL-2.0-only
#include "shapes.h"

#include <sys/utsname.h>

#include <cstdio>
#include <stdexcept>

namespace ezio::test {

const std::vector<Shape> kWrites = {
    {"1B", 0, 1, 1, {}},
    {"1B-unaligned", 5000, 1, 1, {}},
    {"4KiB", 0, 4 * KiB, 1, {}},
    {"4KiB-unaligned", 2048, 4 * KiB, 1, {}},
    {"512KiB-x10", 0, 512 * KiB, 10, {}},
    {"512KiB-x10-unaligned", 2048, 512 * KiB, 10, {}},
    {"8MiB", 0, 8 * MiB, 1, {}},
    {"8MiB-unaligned", 1000, 8 * MiB, 1, {}},
    {"append-100000-x3", 0, 100000, 3, {"append"}, 5000},
    {"pwritev-5-vectors-x2", 777, 15000, 2, {"vectors=5"}},
    {"odirect-512KiB-x4", 0, 512 * KiB, 4, {"direct"}},
    {"crosses-eof", MiB - 1000, 512 * KiB, 1, {}, MiB + 100},
    {"sendfile-512KiB-x4-unaligned", 2048, 512 * KiB, 4, {"via=sendfile"}},
    {"splice-64KiB-x8-unaligned", 1000, 64 * KiB, 8, {"via=splice"}},
    {"short-disk-full-512KiB-x32", 0, 512 * KiB, 32, {}, 0, true},
};

const std::vector<Shape> kReads = {
    {"read-1B", 5000, 1, 1, {}},
    {"read-4KiB", 0, 4 * KiB, 1, {}},
    {"read-512KiB-x10-unaligned", 2048, 512 * KiB, 10, {}},
    {"read-64KiB-x128-readahead", 0, 64 * KiB, 128, {}},
    {"read-8MiB-unaligned", 1000, 8 * MiB, 1, {}},
    {"read-crosses-eof", kReadFileSize - 1000, MiB, 1, {}},
    {"preadv-4-vectors-x3", 777, 40000, 3, {"vectors=4"}},
    {"read-sendfile-512KiB-x4-unaligned", 2048, 512 * KiB, 4, {"via=sendfile"}},
    {"read-sendfile-crosses-eof", kReadFileSize - 1000, MiB, 1, {"via=sendfile"}},
    {"read-splice-64KiB-x8", 4 * KiB, 64 * KiB, 8, {"via=splice"}},
    {"read-splice-crosses-eof", kReadFileSize - 1000, 64 * KiB, 1, {"via=splice"}},
    {"read-odirect-512KiB-x4", 0, 512 * KiB, 4, {"direct"}},
    {"read-odirect-crosses-eof", kReadFileSize - 4 * KiB, 64 * KiB, 1, {"direct"}},
};

std::string hook_mode(const std::string& probe, const std::string& fs) {
  auto at = probe.find(fs + ": ");
  std::string part = at == std::string::npos ? "" : probe.substr(at, probe.find(';', at) - at);
  if (part.find("fentry/fexit") != std::string::npos) return "fentry";
  if (part.find("kprobe/kretprobe") != std::string::npos) return "kprobe";
  if (part.find("tp_btf/") != std::string::npos) return "tracepoint";
  return "none";
}

std::string vfs_hook_mode(const std::string& probe) {
  if (probe.find("fentry/fexit") != std::string::npos) return "fentry";
  if (probe.find("kprobe/kretprobe") != std::string::npos) return "kprobe";
  return probe.empty() ? "none" : "tracepoint";
}

// The exact hooks see every call; the tracepoints see ext4's buffered writes and its direct I/O
// when iomap's tracepoint is there (not on 6.1), all of xfs's calls, none of btrfs's.
bool fs_sees(const std::string& probe, const std::string& fs, bool write, bool direct) {
  std::string mode = hook_mode(probe, fs);
  if (mode == "fentry" || mode == "kprobe") return true;
  if (mode != "tracepoint") return false;
  if (fs == "ext4") return direct ? hook_mode(probe, "iomap") == "tracepoint" : write;
  return fs == "xfs";
}

namespace {

// Whether btrfs writes O_DIRECT through the page cache when it checksums the data (its default):
// since 6.15 (commit 968f19c5b1b7); before, its direct writes dirty no page.
bool btrfs_direct_writes_buffered() {
  struct utsname u {};
  int major = 0, minor = 0;
  if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2) {
    throw std::runtime_error("cannot read the kernel's version");
  }
  return major > 6 || (major == 6 && minor >= 15);
}

}  // namespace

bool xfs_splice_read_hooked() {
  struct utsname u {};
  int major = 0, minor = 0;
  if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2) {
    throw std::runtime_error("cannot read the kernel's version");
  }
  return major < 6 || (major == 6 && minor < 5);
}

int64_t pages_dirtied_by(const Shape& shape, const std::string& fs, bool write, int64_t start,
                         int64_t moved) {
  if (!write) return 0;
  if (shape.direct() && !(fs == "btrfs" && btrfs_direct_writes_buffered())) return 0;
  return pages_touched(start, moved);
}

int64_t pages_touched(int64_t start, int64_t bytes) {
  if (bytes <= 0) return 0;
  return (start + bytes + 4095) / 4096 - start / 4096;
}

}  // namespace ezio::test
