// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A small archive written call by call by a test, in the shapes of docs/trace-model.md: threads of
// process 100 making system calls on files, user-level calls around them, one block device's
// requests and page-cache samples. Events may be added in any order; they are written sorted by
// time on each location when the archive is closed. For tests that need an archive made for one
// case (advise's rules: one where a rule fires, one where it does not).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/otf2/writer.h"

namespace ezio::test {

class TraceBuilder {
 public:
  explicit TraceBuilder(const std::filesystem::path& dir);
  ~TraceBuilder();
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  // Properties of the machine (EZIOTRACE::STATUS, EZIOTRACE::LOST::<layer> default to complete
  // and 0).
  void status(std::string_view s) { status_ = s; }
  void lost(const std::string& layer, uint64_t n) { lost_[layer] = n; }
  // Any string property of the machine (EZIOTRACE::COMMAND...).
  void property(const std::string& name, const std::string& value) { strings_[name] = value; }

  // Another process, `comm [pid]` with EZIOTRACE::PID/PPID, to which threads `tids` belong (the
  // others are process 100's): an MPI launcher and its ranks.
  void process(uint64_t pid, uint64_t ppid, const std::string& comm,
               std::initializer_list<uint64_t> tids);

  // A file of process 100 opened as `fd`, or a descriptor it had before tracing (named as the
  // recorder names one: no path known).
  otf2::Ref file(const std::string& path, int fd);
  otf2::Ref inherited(int fd);

  // System calls of thread `tid` (process 100); times in ns.
  // A read or write moving `bytes` (at `offset`, or at the file position when -1); its call.id.
  uint64_t rw(uint64_t tid, uint64_t t0, uint64_t t1, otf2::Ref file, bool write, uint64_t bytes,
              int64_t offset = -1);
  void open(uint64_t tid, uint64_t t0, uint64_t t1, otf2::Ref file);
  // A call moving no data: fsync/fdatasync flush `file` (a FLUSH operation on it); other calls
  // (stat, close...) name no file.
  void call(uint64_t tid, std::string_view name, uint64_t t0, uint64_t t1,
            otf2::Ref file = OTF2_UNDEFINED_IO_HANDLE);
  // A user-level buffered call (EZTrace's fwrite) writing `bytes` to `file`, with a write system
  // call inside it or not.
  void fwrite(uint64_t tid, uint64_t t0, uint64_t t1, otf2::Ref file, uint64_t bytes,
              bool with_syscall);
  // A user-level I/O call (EZTrace module's region `name`, e.g. MPI_File_write_at_all, H5Dwrite)
  // moving `bytes` with `mode` and `flags` (OTF2_IO_OPERATION_FLAG_COLLECTIVE); its optional
  // mpiio.offset (>= 0), hdf5.object and hdf5.chunk_bytes attributes.
  struct UserIo {
    std::string name;
    OTF2_IoOperationMode mode = OTF2_IO_OPERATION_MODE_WRITE;
    uint64_t bytes = 0;
    OTF2_IoOperationFlag flags = OTF2_IO_OPERATION_FLAG_NONE;
    int64_t offset = -1;
    std::string object;
    uint64_t chunk_bytes = 0;
  };
  void user_io(uint64_t tid, uint64_t t0, uint64_t t1, otf2::Ref file, const UserIo& io);
  // A writer paused by the dirty-page limits (pagecache:balance_dirty_pages).
  void throttle(uint64_t tid, uint64_t t0, uint64_t t1);

  // A request of device "block sda", created at t0 and completed at t1, attributed to `call_id`.
  void block(uint64_t t0, uint64_t t1, bool write, uint64_t bytes, uint64_t sector,
             uint64_t call_id = 0, uint64_t queue_ns = 0, uint64_t service_ns = 0);
  // The process the next block requests are attributed to (block.pid; 0: none).
  void block_pid(uint64_t pid) { block_pid_ = pid; }
  // Page-cache counters of thread `tid` at time t (cumulative).
  void pagecache(uint64_t t, uint64_t tid, uint64_t hits, uint64_t misses);

  // Writes the events and closes the archive; returns its anchor.
  std::filesystem::path close();

 private:
  using Emit = std::function<void(const otf2::EventWriter&)>;
  struct Event {
    uint64_t time, seq;
    Emit emit;
  };
  void at(OTF2_LocationRef loc, uint64_t time, Emit e);
  OTF2_LocationRef thread(uint64_t tid);
  otf2::Ref region(std::string_view layer, std::string_view name, bool io);

  otf2::ArchiveWriter w_;
  otf2::Ref node_, process_, paradigm_;
  otf2::TypedAttribute bytes_, result_, offset_, call_id_, sector_, queue_, service_, pc_tid_;
  std::vector<otf2::TypedAttribute> pc_counters_;
  otf2::Ref pc_class_ = 0;
  otf2::Ref device_handle_ = 0;
  bool device_ = false, pc_location_ = false;
  std::string status_ = "complete";
  std::map<std::string, uint64_t> lost_;
  std::map<std::string, std::string> strings_;
  std::map<uint64_t, otf2::Ref> tid_group_;  // threads of other processes than 100
  otf2::TypedAttribute pid_attr_, mpiio_offset_, hdf5_object_, hdf5_chunk_;
  uint64_t block_pid_ = 0;
  std::map<std::string, otf2::Ref> regions_;
  std::map<OTF2_LocationRef, std::vector<Event>> events_;
  std::map<uint64_t, uint64_t> absorbed_;  // page-cache pages per thread
  uint64_t seq_ = 0, next_call_ = 1, last_time_ = 0;
};

}  // namespace ezio::test
