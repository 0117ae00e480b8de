// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What the kernel tables say at the end of a recording: the block devices the target used and the
// requests on them that could not be attributed to it (recorder/load/kernel_programs.h reads them).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "record.h"

namespace ezio::recorder {

struct UnattributedIo {
  uint64_t requests = 0;
  uint64_t bytes = 0;
};

struct DeviceUse {
  std::set<uint32_t> used;                          // kernel dev_t
  std::map<uint32_t, UnattributedIo> unattributed;  // every device, used or not
};

// Reads the kernel table block_unattributed (bpf/block.bpf.h): per device, the requests no
// session's thread caused.
std::map<uint32_t, UnattributedIo> read_unattributed(int unattributed_fd);

// "loop3" for a kernel dev_t (MAJOR << 20 | MINOR), from /sys/dev/block/M:m/uevent; the name the
// kernel recorded (the disk's) when the device is gone.
std::string device_name(uint32_t dev, std::string_view kernel_name);
uint32_t dev_major(uint32_t dev);
uint32_t dev_minor(uint32_t dev);

}  // namespace ezio::recorder
