// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/anchor.h"

#include <fcntl.h>
#include <otf2/otf2.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "common/unique_fd.h"

namespace ezio::otf2 {

std::filesystem::path find_anchor(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail("{}: no such file or directory", path.string());
  if (fs::is_directory(st)) {
    std::vector<fs::path> anchors;
    for (auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".otf2" && entry.is_regular_file()) {
        anchors.push_back(entry.path());
      }
    }
    if (ec) fail("{}: cannot list directory: {}", path.string(), ec.message());
    if (anchors.empty()) {
      fail("{}: not an OTF2 archive (no .otf2 anchor file in this directory)", path.string());
    }
    if (anchors.size() > 1) {
      fail("{}: holds {} .otf2 anchor files; name the one to read", path.string(), anchors.size());
    }
    return anchors.front();
  }
  if (!fs::is_regular_file(st)) fail("{}: not a regular file", path.string());
  if (fs::file_size(path, ec) == 0) fail("{}: empty file, not an OTF2 archive", path.string());
  return path;
}

namespace {

// An anchor file as it was probed: the same file (device and inode, so that an archive moved
// into place after its read-back is not probed again), size and modification time need no new
// probe (the merge opens each input archive twice: its arguments' check, then the reading).
using AnchorState = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>;

std::optional<AnchorState> state_of(const std::filesystem::path& anchor) {
  struct stat st {};
  if (stat(anchor.c_str(), &st) != 0) return std::nullopt;
  return AnchorState{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

std::mutex parsed_mutex;
std::map<AnchorState, bool> parsed;

// Kills a probe past its deadline (a hang is an unreadable anchor too).
bool killed_late(pid_t pid, int& status) {
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return false;
}

// Waits for the probe: woken by its end through a pidfd (OTF2 opens an anchor in well under a
// millisecond: a polling period would be most of the wait), else by looking now and then.
bool probe_succeeded(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int status = 0;
  UniqueFd ended(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  useconds_t pause = 50;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return true;
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::seconds(0)) return killed_late(pid, status);
    if (ended) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
      pollfd p{ended.get(), POLLIN, 0};
      poll(&p, 1, static_cast<int>(ms));  // interrupted: look again
    } else {
      usleep(pause);
      pause = std::min<useconds_t>(pause * 2, 1000);
    }
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool probe_anchor(const std::filesystem::path& anchor) {
  pid_t pid = fork();
  if (pid < 0) return true;  // cannot probe: let the real open decide
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    alarm(10);
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    _exit(r ? 0 : 1);  // skip OTF2_Reader_Close: nothing to flush for a reader
  }
  return probe_succeeded(pid);
}

}  // namespace

void anchor_written(const std::filesystem::path& anchor) {
  auto state = state_of(anchor);
  if (!state) return;
  std::lock_guard lock(parsed_mutex);
  parsed.insert_or_assign(*state, true);
}

bool anchor_parses(const std::filesystem::path& anchor) {
  auto state = state_of(anchor);
  if (!state) return probe_anchor(anchor);
  {
    std::lock_guard lock(parsed_mutex);
    auto it = parsed.find(*state);
    if (it != parsed.end()) return it->second;
  }
  // Probed unlocked: another thread's probe of another archive (the merge reads the kernel
  // archive on a thread of its own) does not wait for this one.
  bool ok = probe_anchor(anchor);
  std::lock_guard lock(parsed_mutex);
  parsed.emplace(*state, ok);
  return ok;
}

}  // namespace ezio::otf2
