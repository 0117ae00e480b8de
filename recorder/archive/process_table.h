// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The processes and threads of a recording, named and given OTF2 location ids as their records
// arrive.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "recorder/core/recording_info.h"
#include "recorder/decode/record_store.h"

namespace ezio::recorder {

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string comm;
  std::string exe;      // last program exec'd, as passed to execve
  std::string left_at;  // a privileged program whose exec ended the process's recording
  std::map<uint32_t, uint64_t> threads;  // tid -> OTF2 location id
};

class ProcessTable {
 public:
  explicit ProcessTable(const RecordingInfo& info);
  // A fork, exec or exit, in time order.
  void see(const ProcEvent& p);
  // The location of a thread, given on first sight; TIDs reused by another process get ids above
  // 2^33.
  uint64_t location(uint32_t pid, uint32_t tid);
  bool has_process(uint32_t pid) const { return processes_.count(pid) != 0; }
  // Names the processes whose name never arrived "?" (their fork was lost); call at the end.
  void name_the_unnamed();
  const std::map<uint32_t, ProcessInfo>& processes() const { return processes_; }

 private:
  ProcessInfo& process(uint32_t pid);
  std::map<uint32_t, ProcessInfo> processes_;
  std::map<uint64_t, uint32_t> location_owner_;  // location id -> pid
  uint64_t next_spare_id_ = uint64_t(2) << 32;
};

}  // namespace ezio::recorder
