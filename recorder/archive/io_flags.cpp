// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/io_flags.h"

#include <fcntl.h>
#include <unistd.h>

namespace ezio::recorder {

OTF2_IoAccessMode access_mode(uint32_t flags) {
  switch (flags & O_ACCMODE) {
    case O_WRONLY:
      return OTF2_IO_ACCESS_MODE_WRITE_ONLY;
    case O_RDWR:
      return OTF2_IO_ACCESS_MODE_READ_WRITE;
    default:
      return OTF2_IO_ACCESS_MODE_READ_ONLY;
  }
}

OTF2_IoCreationFlag creation_flags(uint32_t flags) {
  uint32_t f = OTF2_IO_CREATION_FLAG_NONE;
  if (flags & O_CREAT) f |= OTF2_IO_CREATION_FLAG_CREATE;
  if (flags & O_TRUNC) f |= OTF2_IO_CREATION_FLAG_TRUNCATE;
  if (flags & O_EXCL) f |= OTF2_IO_CREATION_FLAG_EXCLUSIVE;
  if (flags & O_DIRECTORY) f |= OTF2_IO_CREATION_FLAG_DIRECTORY;
  if (flags & O_NOFOLLOW) f |= OTF2_IO_CREATION_FLAG_NO_FOLLOW;
  if (flags & O_NOCTTY) f |= OTF2_IO_CREATION_FLAG_NO_CONTROLLING_TERMINAL;
  if ((flags & O_TMPFILE) == O_TMPFILE) f |= OTF2_IO_CREATION_FLAG_TEMPORARY_FILE;
  if (flags & O_PATH) f |= OTF2_IO_CREATION_FLAG_PATH;
  return f;
}

OTF2_IoStatusFlag status_flags(uint32_t flags) {
  uint32_t f = OTF2_IO_STATUS_FLAG_NONE;
  if (flags & O_APPEND) f |= OTF2_IO_STATUS_FLAG_APPEND;
  if (flags & O_NONBLOCK) f |= OTF2_IO_STATUS_FLAG_NON_BLOCKING;
  if (flags & O_DIRECT) f |= OTF2_IO_STATUS_FLAG_AVOID_CACHING;
  if ((flags & O_SYNC) == O_SYNC) {
    f |= OTF2_IO_STATUS_FLAG_SYNC;
  } else if (flags & O_DSYNC) {
    f |= OTF2_IO_STATUS_FLAG_DATA_SYNC;
  }
  if (flags & O_CLOEXEC) f |= OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC;
  if (flags & O_NOATIME) f |= OTF2_IO_STATUS_FLAG_NO_ACCESS_TIME;
  return f;
}

OTF2_IoSeekOption seek_option(uint64_t whence) {
  switch (whence) {
    case SEEK_CUR:
      return OTF2_IO_SEEK_FROM_CURRENT;
    case SEEK_END:
      return OTF2_IO_SEEK_FROM_END;
    case SEEK_DATA:
      return OTF2_IO_SEEK_DATA;
    case SEEK_HOLE:
      return OTF2_IO_SEEK_HOLE;
    default:
      return OTF2_IO_SEEK_FROM_START;
  }
}

}  // namespace ezio::recorder
