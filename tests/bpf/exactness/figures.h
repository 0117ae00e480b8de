// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What one recording of the exactness test says about one file and one device, from the analyzers
// (`eziotrace files --json`, `eziotrace layers --json`) and, for the block layer, from the
// archive read by python3-otf2 (tests/support/otf2_dump.py); and the oracle it is compared with,
// the device's own counters.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ezio::test {

// Bytes a layer moved on the file, in the direction of the row (`eziotrace files`): nullopt where
// it says the layer was not observed in that direction.
struct LayerBytes {
  int64_t syscall = 0, vfs = 0;
  std::optional<int64_t> fs;
  int64_t fs_events = 0;             // FS events on the file in that direction
  bool fs_row_not_observed = false;  // what `eziotrace layers` says of the FS in that direction
};

struct Figures {
  LayerBytes file;
  std::string fs_probe;           // EZIOTRACE::PROBE::fs
  std::string vfs_probe;          // EZIOTRACE::PROBE::vfs
  nlohmann::json fs_layer_bytes;  // the FS row's bytes in the direction of the row (`layers`)
  nlohmann::json pages_dirtied;   // the page-cache row's writes: a number or "not observed"
  int64_t device_bytes = 0;       // block requests on the device: attributed and unattributed
};

// The figures of the archive at `anchor` for `file` and the block device `dev` ("loop3").
Figures figures_of(const std::filesystem::path& anchor, const std::string& file,
                   const std::string& dev, bool write);

// Bytes read and written on the device so far, from /sys/block/<dev>/stat (sectors of reads,
// writes and discards, 512 bytes each).
int64_t device_stat_bytes(const std::string& dev);

// The same, once the device has been idle for a while: what a mount does in the background
// (ext4 reads metadata after it) is done before the recording starts, whose programs would not
// see it.
int64_t quiet_device_stat_bytes(const std::string& dev);

// The pages [start, start + bytes) touches.
int64_t pages_touched(int64_t start, int64_t bytes);

}  // namespace ezio::test
