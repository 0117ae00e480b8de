// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/process_table.h"

#include <filesystem>

namespace ezio::recorder {

ProcessTable::ProcessTable(const RecordingInfo& info) {
  for (const NamedProcess& n : info.named_processes) {
    ProcessInfo& p = process(n.pid);
    p.ppid = n.ppid;
    p.comm = n.comm;
    p.exe = n.exe;
  }
  // A snapshot has no root: its processes were running when its window began.
  if (info.root_pid == 0) return;
  ProcessInfo& root = process(info.root_pid);
  // Until its exec record says otherwise, the root is named after the command (comm is 15 chars).
  if (!info.command.empty()) {
    std::string name = std::filesystem::path(info.command.front()).filename().string();
    root.comm.assign(name, 0, 15);
  }
}

ProcessInfo& ProcessTable::process(uint32_t pid) {
  ProcessInfo& p = processes_[pid];
  p.pid = pid;
  return p;
}

void ProcessTable::see(const ProcEvent& p) {
  ProcessInfo& proc = process(p.pid);
  if (p.kind == EZIO_REC_FORK && !p.is_thread) {
    proc.ppid = p.ppid;
    if (proc.comm.empty()) proc.comm = p.comm;
  } else if (p.kind == EZIO_REC_EXEC) {
    proc.comm = p.comm;  // the name the program runs under from then on
    proc.exe = p.filename;
  } else if (p.kind == EZIO_REC_LEAVE) {
    proc.left_at = p.filename;
    return;  // no thread of it is recorded from now on
  }
  location(p.pid, p.tid);
}

uint64_t ProcessTable::location(uint32_t pid, uint32_t tid) {
  ProcessInfo& proc = process(pid);
  auto t = proc.threads.find(tid);
  if (t != proc.threads.end()) return t->second;
  uint64_t id = tid;
  if (auto it = location_owner_.find(id); it != location_owner_.end() && it->second != pid) {
    id = next_spare_id_++;  // the TID was reused by another process during the recording
  }
  location_owner_[id] = pid;
  proc.threads.emplace(tid, id);
  return id;
}

void ProcessTable::name_the_unnamed() {
  for (auto& [pid, proc] : processes_) {
    if (proc.comm.empty()) proc.comm = "?";
  }
}

}  // namespace ezio::recorder
