// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Holds the records received from the kernel, validated and decoded, until the archive is written.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "record.h"
#include "recorder/core/device_use.h"
#include "recorder/core/record_sink.h"

namespace ezio::recorder {

struct OpenCall {
  ezio_syscall_rec sc;
  uint32_t open_flags;
  uint32_t mode;
  std::string path;
};

struct ProcEvent {
  uint8_t kind;  // EZIO_REC_FORK, EZIO_REC_EXEC, EZIO_REC_EXIT, EZIO_REC_LEAVE
  uint64_t ts;
  uint32_t pid, tid, ppid, parent_tid;
  bool is_thread;
  int32_t exit_code;
  std::string comm;
  std::string filename;
};

// The records of calls and processes: kept in the store, handed to the archive writer while the
// recording goes on (RecordStore::take_settled).
struct CallRecords {
  std::vector<ezio_syscall_rec> syscalls;
  std::vector<OpenCall> opens;
  std::vector<ProcEvent> procs;
  std::vector<ezio_vfs_rec> vfs;
  std::vector<ezio_fs_rec> fs;
  std::vector<ezio_file_rec> files;
  std::vector<ezio_block_rec> block;  // completed requests
  std::vector<ezio_pagecache_rec> pagecache;
  std::vector<ezio_throttle_rec> throttles;  // dirty-throttling pauses, nested like FS records
};

class RecordStore final : public RecordSink {
 public:
  // Decodes one ring-buffer record. A record of another layout version or of a size that does not
  // match its kind is not trusted: it is counted in malformed() and reported as lost.
  void add(const void* data, size_t size) override;

  // Moves out the calls, process events, VFS, FS and throttling records that ended before `before`
  // (CLOCK_MONOTONIC ns; a call's VFS and FS records end within it, so they come with it), every
  // file record, every block request (they arrive complete) and every page-cache sample.
  CallRecords take_settled(uint64_t before);
  // Whether calls, process events, VFS or FS records that ended before `before` are held.
  bool holds_settled(uint64_t before) const;
  // The time before which every call, process, VFS and FS record has arrived but for a settle
  // margin (0: none yet). Records arrive in the order they were reserved in their ring buffer,
  // each soon after its end was stamped. With one ring: the latest end received. With several
  // (RingGroup): the least over the rings of each one's frontier, the later of the latest end
  // received from it and the last time it was found empty. A record still to come from ring r
  // was reserved after both, so it ended at most a settle margin before r's frontier, hence
  // before this; what ended earlier than this less the margin is all here, from every ring, and
  // can be written in time order per location (docs/costs.md, Rings per CPU).
  uint64_t newest() const;
  void from_ring(unsigned ring) override;
  void ring_emptied(unsigned ring, uint64_t at_ns) override;

  const std::vector<ezio_syscall_rec>& syscalls() const { return calls_.syscalls; }
  const std::vector<OpenCall>& opens() const { return calls_.opens; }
  const std::vector<ProcEvent>& procs() const { return calls_.procs; }
  const std::vector<ezio_vfs_rec>& vfs() const { return calls_.vfs; }
  const std::vector<ezio_fs_rec>& fs() const { return calls_.fs; }
  const std::vector<ezio_file_rec>& files() const { return calls_.files; }
  const std::vector<ezio_block_rec>& block_requests() const { return calls_.block; }
  const std::vector<ezio_pagecache_rec>& pagecache() const { return calls_.pagecache; }
  const std::vector<ezio_throttle_rec>& throttles() const { return calls_.throttles; }
  // Unattributed requests per device, read from the kernel at the end of the recording.
  DeviceUse& devices() { return devices_; }
  const DeviceUse& devices() const { return devices_; }
  // Pages of each thread's files evicted by others (kswapd, other processes), per TID, read from
  // the kernel at the end of the recording.
  std::map<uint32_t, ezio_reclaimed>& reclaimed() { return reclaimed_; }
  const std::map<uint32_t, ezio_reclaimed>& reclaimed() const { return reclaimed_; }
  uint64_t malformed() const { return malformed_; }
  // Call, process, VFS, FS, file and block records held, not yet taken.
  size_t held() const;
  // Records held past which the recorder stops draining the ring buffer (then the kernel's buffer
  // fills, and what it cannot take is lost, counted): memory stays bounded when the archive is
  // written slower than the records come.
  void limit(size_t max_held) { max_held_ = max_held; }
  bool full() const override { return held() >= max_held_; }
  // Records received per layer (enum ezio_layer).
  const std::array<uint64_t, EZIO_LAYER_COUNT>& received() const { return received_; }

 private:
  // Each kind of record into calls_; false when its size is wrong.
  // An end time received (from the current ring).
  void saw(uint64_t t);
  template <typename Rec>
  bool add_as_is(const void* data, size_t size, std::vector<Rec>& to);
  bool add_syscall_vfs(const void* data, size_t size);
  bool add_open(const void* data, size_t size);
  bool add_proc(const ezio_header& h, const void* data, size_t size);

  CallRecords calls_;
  DeviceUse devices_;
  std::map<uint32_t, ezio_reclaimed> reclaimed_;
  uint64_t malformed_ = 0;
  uint64_t newest_ = 0;
  struct RingFrontier {
    uint64_t newest = 0, emptied_at = 0;
  };
  std::vector<RingFrontier> rings_;  // empty: one ring, which never said so
  unsigned ring_ = 0;                // the ring records come from now
  size_t max_held_ = SIZE_MAX;
  std::array<uint64_t, EZIO_LAYER_COUNT> received_{};
};

}  // namespace ezio::recorder
