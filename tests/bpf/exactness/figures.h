// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What one recording of the exactness test says about its files and one device, from the analyzers
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
  int64_t fs_events = 0;  // FS events on the file in that direction
};

// A recording's analyses, made once for all the rows it holds.
struct Recording {
  nlohmann::json files, layers;
  std::string fs_probe;      // EZIOTRACE::PROBE::fs
  std::string vfs_probe;     // EZIOTRACE::PROBE::vfs
  int64_t device_bytes = 0;  // block requests on the device: attributed and unattributed
  // The device's own byte counter as the recorder read it when its session began and ended
  // (EZIOTRACE::DEVICE_BYTES_AT_START/_AT_END): nullopt when the archive has none.
  std::optional<int64_t> window_start, window_end;
  // The FS row's bytes in a direction (`layers`): a number or "not observed".
  nlohmann::json fs_layer_bytes(bool write) const;
  // The page-cache row's writes (`layers`): a number or "not observed".
  nlohmann::json pages_dirtied() const;
  // What the layers moved on `file` in a direction (`files`).
  LayerBytes file(const std::string& file, bool write) const;
};

// The analyses of the archive at `anchor`, with the block device `dev` ("loop3").
Recording analyze(const std::filesystem::path& anchor, const std::string& dev);

// Bytes read and written on the device so far, from /sys/block/<dev>/stat (sectors of reads,
// writes and discards, 512 bytes each).
int64_t device_stat_bytes(const std::string& dev);

// The same, once the device has been idle for a while: what a mount does in the background
// (ext4 reads metadata after it) is done before the recording starts, whose programs would not
// see it.
int64_t quiet_device_stat_bytes(const std::string& dev);

}  // namespace ezio::test
