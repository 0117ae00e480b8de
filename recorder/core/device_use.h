// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What the kernel tables say at the end of a recording: the block devices the target used and the
// requests on them that could not be attributed to it (recorder/load/kernel_programs.h reads them).
#include <chrono>
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
  uint64_t not_issued = 0;  // ezio_block_unattributed.not_issued: anyone's
  // The device's own count of the requests it completed (/sys/dev/block/M:m/stat: reads, writes,
  // discards and flushes), read with the table (add_device_requests), so that a window says what
  // the device did in it, and the bytes of those (its sectors read, written and discarded); 0 with
  // device_read false when not read.
  uint64_t device = 0;
  uint64_t device_bytes = 0;
  bool device_read = false;
};

// The kernel table block_unattributed as a session found it at its start and left it at its end.
// The table counts for every session of the loaded programs, never decreasing: several sessions
// of one node that read the same table count the union of their windows exactly from these
// (docs/cluster.md, "Several parts of one host").
struct UnattributedWindow {
  uint64_t table = 0;  // which table (the machine's boot and the map's id); 0: not known
  std::map<uint32_t, UnattributedIo> start, end;  // by kernel dev_t; absent: 0
};

struct DeviceUse {
  std::set<uint32_t> used;                          // kernel dev_t
  std::map<uint32_t, UnattributedIo> unattributed;  // every device, used or not
  UnattributedWindow window;
};

// Reads the kernel table block_unattributed (bpf/block.bpf.h): per device, the requests no
// session's thread caused.
std::map<uint32_t, UnattributedIo> read_unattributed(int unattributed_fd);

// Adds to `table` each block device's own count of completed requests (UnattributedIo::device),
// every device the machine has (a device the table has not counted yet gets an entry of its own).
void add_device_requests(std::map<uint32_t, UnattributedIo>& table);

// An identifier of the table behind unattributed_fd, equal for every session that reads the same
// one: the kernel's id of the map, which is unique while the machine runs, with the machine's
// boot id (/proc/sys/kernel/random/boot_id). 0 when the kernel does not say.
uint64_t unattributed_table_id(int unattributed_fd);

// What the table counted between two readings of it: the table is never reset while the programs
// stay loaded (eziotraced keeps them across sessions), so a session's share is its end's reading
// less its start's. Devices with nothing counted in between are left out.
std::map<uint32_t, UnattributedIo> unattributed_since(
    const std::map<uint32_t, UnattributedIo>& now, const std::map<uint32_t, UnattributedIo>& base);

// Block requests a part of which is session `id`'s and that the kernel has not completed yet: their
// entries in the kernel table block_reqs (bpf/block.bpf.h), removed at completion, when the part
// is recorded.
uint64_t unfinished_requests(int block_reqs_fd, uint32_t id);

// Waits until none of session `id`'s block requests is unfinished, up to `limit`: those the
// application left in flight when it ended (readahead, a write it did not wait for) are recorded
// at their completion, which must come before the session ends. Returns those still unfinished.
uint64_t wait_requests_done(int block_reqs_fd, uint32_t id, std::chrono::milliseconds limit);

// "loop3" for a kernel dev_t (MAJOR << 20 | MINOR), from /sys/dev/block/M:m/uevent; the name the
// kernel recorded (the disk's) when the device is gone.
std::string device_name(uint32_t dev, std::string_view kernel_name);
uint32_t dev_major(uint32_t dev);
uint32_t dev_minor(uint32_t dev);

}  // namespace ezio::recorder
