// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Follows each process's file descriptors through the recording, so that every I/O event lands on
// the IoHandle of the file that fd referred to at that moment.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/otf2/writer.h"
#include "recorder/core/recording_info.h"

namespace ezio::recorder {

class FdTable {
 public:
  FdTable(otf2::ArchiveWriter& writer, otf2::Ref machine, const RecordingInfo& info);

  // A new handle for fd, from a successful open of path.
  otf2::Ref open(uint32_t pid, int64_t fd, const std::string& path);
  // The handle fd refers to; one is made up (pre-created) for an fd opened before tracing or by a
  // call that is not traced (pipe, socket…).
  otf2::Ref handle(uint32_t pid, int64_t fd);
  // Returns the handle that was closed, if the fd was known.
  std::optional<otf2::Ref> close(uint32_t pid, int64_t fd);
  otf2::Ref dup(uint32_t pid, int64_t old_fd, int64_t new_fd);
  // A forked child starts with copies of its parent's descriptors.
  void fork(uint32_t parent, uint32_t child);
  // The path behind a descriptor, if known (for openat relative to a directory fd).
  std::optional<std::string> path(uint32_t pid, int64_t fd) const;

 private:
  struct Entry {
    otf2::Ref handle;
    std::string path;
  };
  otf2::Ref make_handle(uint32_t pid, int64_t fd, const std::string& path, bool pre_created);

  otf2::ArchiveWriter& writer_;
  otf2::Ref machine_;
  otf2::Ref paradigm_;
  const RecordingInfo& info_;
  std::map<uint32_t, std::map<int64_t, Entry>> fds_;
};

}  // namespace ezio::recorder
