#pragma once
// What the kernel tables say at the end of a recording: the block devices the target used, the
// requests on them that could not be attributed to it, the pages others evicted from it.
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

// Reads the kernel tables target_devs and block_unattributed (bpf/attribution.bpf.h, block.bpf.h).
DeviceUse read_device_use(int target_devs_fd, int unattributed_fd);

// Reads the kernel table `reclaimed` (bpf/pagecache.bpf.h): per TID, pages of its files that
// others evicted.
std::map<uint32_t, ezio_reclaimed> read_reclaimed(int reclaimed_fd);

// "loop3" for a kernel dev_t (MAJOR << 20 | MINOR), from /sys/dev/block/M:m/uevent; the name the
// kernel recorded (the disk's) when the device is gone.
std::string device_name(uint32_t dev, std::string_view kernel_name);
uint32_t dev_major(uint32_t dev);
uint32_t dev_minor(uint32_t dev);

}  // namespace ezio::recorder
