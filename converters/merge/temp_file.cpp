// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/temp_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/error.h"

namespace ezio::converters {

UniqueFd temporary_file(const std::filesystem::path& dir) {
  UniqueFd fd(open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd) return fd;
  // File systems without O_TMPFILE: a named file, unlinked at once.
  std::string path = (dir / ".eziotrace-merge.XXXXXX").string();
  fd = UniqueFd(mkostemp(path.data(), O_CLOEXEC));
  if (!fd) fail("{}: cannot create the merge's temporary file: {}", dir.string(), strerror(errno));
  unlink(path.c_str());
  return fd;
}

void write_fully(int fd, const void* data, size_t bytes, uint64_t offset,
                 const std::filesystem::path& dir) {
  // A short write is the disk filling up: writing the rest makes the kernel say why (ENOSPC).
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t put = pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (put <= 0) {
      fail("{}: cannot write the merge's temporary file: {}", dir.string(),
           errno_text(put < 0 ? errno : ENOSPC));
    }
    p += put;
    bytes -= static_cast<size_t>(put);
    offset += static_cast<uint64_t>(put);
  }
}

void read_fully(int fd, void* data, size_t bytes, uint64_t offset,
                const std::filesystem::path& dir) {
  ssize_t got = pread(fd, data, bytes, static_cast<off_t>(offset));
  if (got != static_cast<ssize_t>(bytes)) {
    fail("{}: cannot read the merge's temporary file: {}", dir.string(),
         got < 0 ? strerror(errno) : "short read");
  }
}

}  // namespace ezio::converters
