// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/flight_buffer.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "record.h"

namespace ezio::recorder::service {
namespace {

// What a held record costs besides its bytes (its deque slot, its string's header).
constexpr uint64_t kOverhead = sizeof(uint64_t) * 2 + sizeof(std::string);

template <typename Rec>
bool read_as(const void* data, size_t size, Rec& r) {
  if (size < sizeof(Rec)) return false;
  std::memcpy(&r, data, sizeof(Rec));
  return true;
}

// Records whose call id is followed by the call's enter and exit times.
template <typename Rec>
bool call_span(const void* data, size_t size, uint64_t& begin, uint64_t& end) {
  Rec r;
  if (!read_as(data, size, r)) return false;
  begin = r.t_enter;
  end = r.t_exit;
  return true;
}

void append(std::vector<char>& out, const std::string& rec) {
  uint32_t size = static_cast<uint32_t>(rec.size());
  const char* p = reinterpret_cast<const char*>(&size);
  out.insert(out.end(), p, p + sizeof(size));
  out.insert(out.end(), rec.begin(), rec.end());
  out.resize((out.size() + 7) & ~size_t{7});
}

}  // namespace

bool record_span(const void* data, size_t size, uint64_t& begin, uint64_t& end) {
  ezio_header h;
  if (!read_as(data, size, h)) return false;
  switch (h.kind) {
    case EZIO_REC_SYSCALL:
    case EZIO_REC_OPEN:
    case EZIO_REC_SYSCALL_VFS:
      return call_span<ezio_syscall_rec>(data, size, begin, end);
    case EZIO_REC_VFS:
      return call_span<ezio_vfs_rec>(data, size, begin, end);
    case EZIO_REC_FS:
      return call_span<ezio_fs_rec>(data, size, begin, end);
    case EZIO_REC_THROTTLE:
      return call_span<ezio_throttle_rec>(data, size, begin, end);
    case EZIO_REC_FORK:
    case EZIO_REC_EXEC:
    case EZIO_REC_EXIT:
    case EZIO_REC_LEAVE: {
      ezio_proc_rec r;
      if (!read_as(data, size, r)) return false;
      begin = end = r.ts;
      return true;
    }
    case EZIO_REC_PAGECACHE: {
      ezio_pagecache_rec r;
      if (!read_as(data, size, r)) return false;
      begin = end = r.ts;
      return true;
    }
    case EZIO_REC_BLOCK: {
      ezio_block_rec r;
      if (!read_as(data, size, r)) return false;
      begin = r.t_queue ? r.t_queue : r.t_issue;
      end = r.t_complete;
      return true;
    }
    default:
      return false;
  }
}

void FlightBuffer::add(const void* data, size_t size) {
  ezio_header h;
  if (!read_as(data, size, h)) return;
  std::string rec(static_cast<const char*>(data), size);
  if (h.kind == EZIO_REC_FILE) {
    ezio_file_rec f;
    if (!read_as(data, size, f)) return;
    auto [it, added] = files_.try_emplace({h.pid, f.file_key}, std::move(rec));
    if (added) bytes_ += size + kOverhead;
  } else {
    uint64_t begin = 0, end = 0;
    if (!record_span(data, size, begin, end)) return;
    if (h.kind == EZIO_REC_EXEC || h.kind == EZIO_REC_FORK) {
      ezio_proc_rec p;
      read_as(data, size, p);
      if (h.kind == EZIO_REC_EXEC || !p.is_thread) {
        KnownProcess& k = processes_[h.pid];
        k.pid = h.pid;
        if (h.kind == EZIO_REC_FORK) k.ppid = p.ppid;
        k.comm.assign(p.comm, strnlen(p.comm, sizeof(p.comm)));
        if (h.kind == EZIO_REC_EXEC)
          k.exe.assign(p.filename, strnlen(p.filename, sizeof(p.filename)));
      }
    }
    bytes_ += size + kOverhead;
    events_.push_back({begin, end, std::move(rec)});
  }
  while (bytes_ > max_bytes_ && !events_.empty()) {
    dropped_until_ = std::max(dropped_until_, events_.front().end);
    ++dropped_;
    pop_oldest();
  }
}

void FlightBuffer::expire(uint64_t now_ns) {
  while (!events_.empty() && events_.front().end + keep_ns_ < now_ns) pop_oldest();
}

void FlightBuffer::pop_oldest() {
  const std::string& rec = events_.front().rec;
  ezio_header h;
  std::memcpy(&h, rec.data(), sizeof(h));
  // A process whose exit leaves the buffer has no event left in it: what was kept of it goes.
  if (h.kind == EZIO_REC_EXIT && h.pid == h.tid) forget_process(h.pid);
  bytes_ -= rec.size() + kOverhead;
  events_.pop_front();
}

void FlightBuffer::forget_process(uint32_t pid) {
  processes_.erase(pid);
  auto first = files_.lower_bound({pid, 0});
  auto last = files_.lower_bound({pid + 1, 0});
  for (auto it = first; it != last; ++it) bytes_ -= it->second.size() + kOverhead;
  files_.erase(first, last);
}

FlightBuffer::Window FlightBuffer::window(uint64_t start_ns, uint64_t end_ns) const {
  Window w;
  w.start_ns = std::max(start_ns, dropped_until_ ? dropped_until_ + 1 : 0);
  w.end_ns = end_ns;
  std::map<uint32_t, bool> pids;  // the window's processes: exec'd inside it (true) or before
  std::vector<char> events;
  for (const Held& e : events_) {
    if (e.begin < w.start_ns || e.end > w.end_ns) continue;
    ezio_header h;
    std::memcpy(&h, e.rec.data(), sizeof(h));
    pids[h.pid] |= h.kind == EZIO_REC_EXEC || (h.kind == EZIO_REC_FORK && h.pid == h.tid);
    append(events, e.rec);
    ++w.events;
  }
  for (const auto& [key, rec] : files_) {
    if (pids.count(key.first)) append(w.records, rec);
  }
  w.records.insert(w.records.end(), events.begin(), events.end());
  for (const auto& [pid, named] : pids) {
    auto it = processes_.find(pid);
    if (!named && it != processes_.end()) w.processes.push_back(it->second);
  }
  return w;
}

}  // namespace ezio::recorder::service
