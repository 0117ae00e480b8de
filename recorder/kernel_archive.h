#pragma once
// Turns the records of a recording into an OTF2 archive (see docs/trace-model.md).
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "recorder/pagecache_archive.h"
#include "recorder/record_store.h"
#include "recorder/recording_info.h"

namespace ezio::recorder {

struct LayerTotals {
  uint64_t events = 0;
  uint64_t reads = 0, writes = 0, other = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t time_ns = 0;
};

struct ArchiveSummary {
  std::array<LayerTotals, EZIO_LAYER_COUNT> layers{};
  uint64_t processes = 0, threads = 0;
  PageCacheTotals pagecache;                         // pages, all traced threads
  std::map<std::string, UnattributedIo> unattributed;  // block requests per device name
};

// Writes the archive into dir (which must not hold one yet).
ArchiveSummary write_kernel_archive(const std::filesystem::path& dir, const RecordStore& store,
                                    const RecordingInfo& info);

}  // namespace ezio::recorder
