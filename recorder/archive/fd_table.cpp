// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/fd_table.h"

#include <fmt/format.h>

namespace ezio::recorder {

FdTable::FdTable(otf2::ArchiveWriter& writer, otf2::Ref machine, const RecordingInfo& info)
    : writer_(writer), machine_(machine), info_(info) {
  paradigm_ = writer_.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                                  OTF2_IO_PARADIGM_FLAG_OS);
}

otf2::Ref FdTable::make_handle(uint32_t pid, int64_t fd, const std::string& path,
                               bool pre_created) {
  otf2::Ref file = writer_.io_file(path, machine_);
  otf2::Ref h =
      writer_.io_handle(fmt::format("{} [pid {} fd {}]", path, pid, fd), file, paradigm_,
                        pre_created ? OTF2_IO_HANDLE_FLAG_PRE_CREATED : OTF2_IO_HANDLE_FLAG_NONE);
  fds_[pid][fd] = {h, path};
  return h;
}

otf2::Ref FdTable::open(uint32_t pid, int64_t fd, const std::string& path) {
  return make_handle(pid, fd, path, false);
}

otf2::Ref FdTable::handle(uint32_t pid, int64_t fd) {
  auto& table = fds_[pid];
  if (auto it = table.find(fd); it != table.end()) return it->second.handle;
  std::string path;
  if (pid == static_cast<uint32_t>(info_.root_pid) && fd >= 0 && fd < 3 &&
      !info_.stdio_paths[fd].empty()) {
    path = info_.stdio_paths[fd];
  } else {
    path =
        fmt::format("<fd {} of pid {}: opened before tracing, or by a call not traced>", fd, pid);
  }
  return make_handle(pid, fd, path, true);
}

std::optional<otf2::Ref> FdTable::close(uint32_t pid, int64_t fd) {
  auto& table = fds_[pid];
  auto it = table.find(fd);
  if (it == table.end()) return std::nullopt;
  otf2::Ref h = it->second.handle;
  table.erase(it);
  return h;
}

otf2::Ref FdTable::dup(uint32_t pid, int64_t old_fd, int64_t new_fd) {
  handle(pid, old_fd);
  std::string path = fds_[pid][old_fd].path;
  return make_handle(pid, new_fd, path, false);
}

void FdTable::fork(uint32_t parent, uint32_t child) {
  auto it = fds_.find(parent);
  if (it == fds_.end()) return;
  auto copy = it->second;  // make_handle below may insert into fds_
  for (const auto& [fd, entry] : copy) make_handle(child, fd, entry.path, true);
}

std::optional<std::string> FdTable::path(uint32_t pid, int64_t fd) const {
  auto p = fds_.find(pid);
  if (p == fds_.end()) return std::nullopt;
  auto f = p->second.find(fd);
  if (f == p->second.end()) return std::nullopt;
  return f->second.path;
}

}  // namespace ezio::recorder
