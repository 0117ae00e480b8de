#pragma once
// The processes and threads of a recording, named and given OTF2 location ids.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "recorder/record_store.h"
#include "recorder/recording_info.h"

namespace ezio::recorder {

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string comm;
  std::string exe;  // last program exec'd, as passed to execve
  std::map<uint32_t, uint64_t> threads;  // tid -> OTF2 location id
};

class ProcessTable {
 public:
  ProcessTable(const RecordStore& store, const RecordingInfo& info);
  const std::map<uint32_t, ProcessInfo>& processes() const { return processes_; }
  // The location of a thread; TIDs reused by another process get ids above 2^33.
  uint64_t location(uint32_t pid, uint32_t tid) const;

 private:
  void add_thread(uint32_t pid, uint32_t tid);
  std::map<uint32_t, ProcessInfo> processes_;
  std::map<uint64_t, uint32_t> location_owner_;  // location id -> pid
  uint64_t next_spare_id_ = uint64_t(2) << 32;
};

}  // namespace ezio::recorder
