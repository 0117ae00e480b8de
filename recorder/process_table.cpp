#include "recorder/process_table.h"

#include <filesystem>

#include "common/error.h"

namespace ezio::recorder {

ProcessTable::ProcessTable(const RecordStore& store, const RecordingInfo& info) {
  auto& root = processes_[info.root_pid];
  root.pid = info.root_pid;
  // Until its exec record says otherwise, the root is named after the command (comm is 15 chars).
  if (!info.command.empty()) {
    std::string name = std::filesystem::path(info.command.front()).filename().string();
    root.comm.assign(name, 0, 15);
  }
  for (const auto& p : store.procs()) {
    auto& proc = processes_[p.pid];
    proc.pid = p.pid;
    if (p.kind == EZIO_REC_FORK && !p.is_thread) {
      proc.ppid = p.ppid;
      if (proc.comm.empty()) proc.comm = p.comm;
    } else if (p.kind == EZIO_REC_EXEC) {
      proc.comm = p.comm;  // the name the program runs under from then on
      proc.exe = p.filename;
    }
    add_thread(p.pid, p.tid);
  }
  for (const auto& s : store.syscalls()) add_thread(s.h.pid, s.h.tid);
  for (const auto& o : store.opens()) add_thread(o.sc.h.pid, o.sc.h.tid);
  for (auto& [pid, proc] : processes_) {
    proc.pid = pid;
    if (proc.comm.empty()) proc.comm = "?";
  }
}

void ProcessTable::add_thread(uint32_t pid, uint32_t tid) {
  auto& proc = processes_[pid];
  if (proc.threads.count(tid)) return;
  uint64_t id = tid;
  if (auto it = location_owner_.find(id); it != location_owner_.end() && it->second != pid) {
    id = next_spare_id_++;  // the TID was reused by another process during the recording
  }
  location_owner_[id] = pid;
  proc.threads[tid] = id;
}

uint64_t ProcessTable::location(uint32_t pid, uint32_t tid) const {
  auto p = processes_.find(pid);
  if (p == processes_.end()) fail("internal: unknown process {}", pid);
  auto t = p->second.threads.find(tid);
  if (t == p->second.threads.end()) fail("internal: unknown thread {} of process {}", tid, pid);
  return t->second;
}

}  // namespace ezio::recorder
