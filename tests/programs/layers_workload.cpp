// SPDX-License-Identifier: GPL-2.0-only
// The workload of the layer tests: known numbers of buffered writes, reads, one fsync and direct
// writes on files of the directory given, so that every layer's count is exact; then one open of
// a path relative to a working directory it changed to.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kCalls = 16;
constexpr size_t kBlock = 4096;

[[noreturn]] void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  alignas(4096) static char buf[kBlock];
  std::memset(buf, 'e', sizeof(buf));

  int fd = open((dir + "/data").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die("open data");
  for (int i = 0; i < kCalls; ++i) {
    if (write(fd, buf, kBlock) != static_cast<ssize_t>(kBlock)) die("write");
  }
  if (fsync(fd)) die("fsync");
  close(fd);

  fd = open((dir + "/data").c_str(), O_RDONLY);
  if (fd < 0) die("open data for reading");
  for (int i = 0; i < kCalls; ++i) {
    if (read(fd, buf, kBlock) != static_cast<ssize_t>(kBlock)) die("read");
  }
  close(fd);

  fd = open((dir + "/direct").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
  if (fd < 0) die("open direct");
  for (int i = 0; i < 4; ++i) {
    if (pwrite(fd, buf, kBlock, i * kBlock) != static_cast<ssize_t>(kBlock)) die("pwrite");
  }
  close(fd);

  // A path relative to a working directory changed since the start: the archive must name the
  // file the kernel opened, DIR/sub/rel (tests/qemu/record-layers.sh, in every VFS mode).
  std::string sub = dir + "/sub";
  if (mkdir(sub.c_str(), 0755) && errno != EEXIST) die("mkdir sub");
  if (chdir(sub.c_str())) die("chdir sub");
  fd = open("rel", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die("open rel");
  close(fd);
  return 0;
}
