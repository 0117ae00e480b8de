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
  ssize_t put = pwrite(fd, data, bytes, static_cast<off_t>(offset));
  if (put != static_cast<ssize_t>(bytes)) {
    fail("{}: cannot write the merge's temporary file: {}", dir.string(),
         put < 0 ? strerror(errno) : "disk full");
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
