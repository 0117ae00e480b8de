#include "common/otf2/anchor.h"

#include <fcntl.h>
#include <otf2/otf2.h>
#include <signal.h>
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

// An anchor file as it was probed: the same path, size and modification time need no new probe
// (the merge opens each input archive twice: its arguments' check, then the reading).
using AnchorState = std::tuple<std::filesystem::path, uintmax_t, std::filesystem::file_time_type>;

std::optional<AnchorState> state_of(const std::filesystem::path& anchor) {
  std::error_code ec;
  auto size = std::filesystem::file_size(anchor, ec);
  if (ec) return std::nullopt;
  auto mtime = std::filesystem::last_write_time(anchor, ec);
  if (ec) return std::nullopt;
  return AnchorState{std::filesystem::absolute(anchor, ec), size, mtime};
}

std::mutex parsed_mutex;
std::map<AnchorState, bool> parsed;

// Waits for the probe: OTF2 opens an anchor in well under a millisecond, so the first looks come
// soon; a probe past the deadline is killed (a hang is an unreadable anchor too).
bool probe_succeeded(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  useconds_t pause = 50;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return true;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    usleep(pause);
    pause = std::min<useconds_t>(pause * 2, 1000);
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

bool anchor_parses(const std::filesystem::path& anchor) {
  auto state = state_of(anchor);
  if (!state) return probe_anchor(anchor);
  std::lock_guard lock(parsed_mutex);
  auto it = parsed.find(*state);
  if (it == parsed.end()) it = parsed.emplace(*state, probe_anchor(anchor)).first;
  return it->second;
}

}  // namespace ezio::otf2
