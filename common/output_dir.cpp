// SPDX-License-Identifier: GPL-2.0-only
#include "common/output_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/otf2/reader.h"
#include "common/schema/files.h"
#include "common/unique_fd.h"

namespace fs = std::filesystem;

namespace ezio {
namespace {

// The marker's text names the kind: a working directory renamed to an output is not an archive.
std::string marker_text(DirKind kind) {
  return fmt::format(
      "eziotrace {} directory\n"
      "eziotrace made this directory. `eziotrace --force` removes it only as long as it holds\n"
      "nothing but what eziotrace writes into it.\n",
      kind == DirKind::archive ? "archive" : "working");
}

// Where an entry sits in the layout of a directory kind: what it may hold.
enum class Level { any, archive_top, archive_events, archive_alignment };

struct Entry {
  std::string name;
  mode_t mode;
};

// The entries of an open directory, as they are (lstat: a symbolic link is a link).
std::vector<Entry> entries(int dir_fd) {
  std::vector<Entry> out;
  int fd = dup(dir_fd);
  DIR* d = fd >= 0 ? fdopendir(fd) : nullptr;
  if (!d) {
    if (fd >= 0) close(fd);
    fail("cannot list a directory: {}", errno_text(errno));
  }
  rewinddir(d);
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st {};
    if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    out.push_back({std::string(n), st.st_mode});
  }
  closedir(d);
  return out;
}

UniqueFd open_dir_nofollow(int at, const std::string& name) {
  return UniqueFd(openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// Why `e` does not belong at this level of the layout (empty: it does); for a directory, the level
// of its own entries.
std::optional<std::string> misfit(const Entry& e, Level level, Level& inner) {
  if (S_ISLNK(e.mode)) return fmt::format("{} is a symbolic link", e.name);
  if (!S_ISREG(e.mode) && !S_ISDIR(e.mode)) {
    return fmt::format("{} is neither a regular file nor a directory", e.name);
  }
  bool dir = S_ISDIR(e.mode);
  auto ends = [&](std::string_view s) { return !dir && e.name.ends_with(s); };
  bool fits = true;
  switch (level) {
    case Level::any:
      inner = Level::any;
      break;
    case Level::archive_top:
      inner = e.name == schema::kArchiveName ? Level::archive_events : Level::archive_alignment;
      fits = dir ? (e.name == schema::kArchiveName || e.name == schema::kAlignmentDir)
                 : (e.name == schema::kAnchorFile || e.name == schema::kDefinitionsFile ||
                    e.name == kMarkerName);
      break;
    case Level::archive_events:
      fits = ends(".evt") || ends(".def");
      break;
    case Level::archive_alignment:
      fits = ends(".json");
      break;
  }
  if (!fits) return fmt::format("{} is not something eziotrace writes into an archive", e.name);
  return std::nullopt;
}

// Why the tree under dir_fd does not fit the layout (empty: it does). `at` names it in messages.
std::optional<std::string> misfit_tree(int dir_fd, Level level, const fs::path& at, int depth) {
  if (depth > 64) return fmt::format("{} is nested too deep", at.string());
  for (const Entry& e : entries(dir_fd)) {
    Level inner = level;
    if (auto why = misfit(e, level, inner)) return (at / *why).string();
    if (!S_ISDIR(e.mode)) continue;
    UniqueFd sub = open_dir_nofollow(dir_fd, e.name);
    if (!sub)
      return fmt::format("{} cannot be opened: {}", (at / e.name).string(), errno_text(errno));
    if (auto why = misfit_tree(sub.get(), inner, at / e.name, depth + 1)) return why;
  }
  return std::nullopt;
}

// Removes what the tree under dir_fd holds, checking each entry again as it goes (the tree may
// have changed since it was proved): anything that does not fit stops the removal. The removed
// directories stay open in `removed` (close_at_once).
void remove_tree(int dir_fd, Level level, const fs::path& at, bool top,
                 std::vector<UniqueFd>& removed) {
  for (const Entry& e : entries(dir_fd)) {
    if (top && e.name == kMarkerName) continue;  // last: a removal cut short stays provable
    Level inner = level;
    if (auto why = misfit(e, level, inner)) fail("stopped removing {}: {}", at.string(), *why);
    UniqueFd sub;
    if (S_ISDIR(e.mode)) {
      sub = open_dir_nofollow(dir_fd, e.name);
      if (!sub) fail("cannot open {}: {}", (at / e.name).string(), errno_text(errno));
      remove_tree(sub.get(), inner, at / e.name, false, removed);
    }
    if (unlinkat(dir_fd, e.name.c_str(), S_ISDIR(e.mode) ? AT_REMOVEDIR : 0) != 0) {
      fail("cannot remove {}: {}", (at / e.name).string(), errno_text(errno));
    }
    if (sub) removed.push_back(std::move(sub));
  }
  if (top && unlinkat(dir_fd, kMarkerName, 0) != 0 && errno != ENOENT) {
    fail("cannot remove {}: {}", (at / kMarkerName).string(), errno_text(errno));
  }
}

// Closes the removed directories at once. The last reference to a removed directory frees its
// block, which a file system mounted with `discard` (ext4) trims there and then, waiting for the
// device (docs/costs.md): closed on threads of their own, the trims overlap instead of adding up
// along the tree. The names were gone already.
void close_at_once(std::vector<UniqueFd>& removed) {
  constexpr size_t kThreads = 8;
  size_t n = std::min(kThreads, removed.size());
  std::vector<std::jthread> threads;
  for (size_t t = 0; t < n; ++t) {
    auto work = [&removed, t, n] {
      for (size_t i = t; i < removed.size(); i += n) removed[i].reset();
    };
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {
      work();  // no thread to be had: closed here
    }
  }
  threads.clear();  // joined here
  removed.clear();
}

bool same_file(const struct stat& a, const fs::path& p) {
  struct stat b {};
  return stat(p.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// /, the home directories of the user (and of the one behind sudo), the working directory and
// every directory above it.
std::optional<std::string> protected_dir(const struct stat& st) {
  std::vector<std::pair<fs::path, const char*>> guarded = {{"/", "the root directory"}};
  if (const char* home = std::getenv("HOME"); home && *home) guarded.push_back({home, "$HOME"});
  const char* sudo_uid = std::getenv("SUDO_UID");
  for (uid_t uid : {getuid(), static_cast<uid_t>(sudo_uid ? std::atol(sudo_uid) : 0)}) {
    if (passwd* pw = getpwuid(uid)) guarded.push_back({pw->pw_dir, "a home directory"});
  }
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  for (fs::path p = cwd; !ec && !p.empty(); p = p.parent_path()) {
    guarded.push_back({p, p == cwd ? "the working directory" : "above the working directory"});
    if (p == p.parent_path()) break;
  }
  for (const auto& [p, what] : guarded) {
    if (same_file(st, p)) return fmt::format("it is {}", what);
  }
  return std::nullopt;
}

std::optional<std::string> marker_mismatch(int dir_fd, DirKind kind) {
  UniqueFd m(openat(dir_fd, kMarkerName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!m) {
    return fmt::format("it has no eziotrace marker ({}): eziotrace did not make it", kMarkerName);
  }
  std::string want = marker_text(kind), got(want.size() + 1, '\0');
  ssize_t n = read(m.get(), got.data(), got.size());
  if (n != static_cast<ssize_t>(want.size()) || got.compare(0, want.size(), want) != 0) {
    return fmt::format("its {} is not the marker eziotrace writes into {} directory", kMarkerName,
                       kind == DirKind::archive ? "an archive" : "a working");
  }
  return std::nullopt;
}

// The directory opened without following a link, and the directory holding it; or why not.
struct Opened {
  UniqueFd parent, dir;
  std::string name;
};
std::optional<std::string> open_own(const fs::path& dir, Opened& o) {
  o.name = dir.filename().string();
  if (o.name.empty() || o.name == "." || o.name == "..") return "it is not a named directory";
  o.parent = UniqueFd(open(dir.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!o.parent) return fmt::format("cannot open its parent: {}", errno_text(errno));
  struct stat st {};
  if (fstatat(o.parent.get(), o.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno_text(errno);
  }
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (auto why = protected_dir(st)) return why;
  o.dir = open_dir_nofollow(o.parent.get(), o.name);
  if (!o.dir) return fmt::format("cannot open it: {}", errno_text(errno));
  return std::nullopt;
}

std::optional<std::string> why_not(Opened& o, const fs::path& dir, DirKind kind) {
  if (auto why = open_own(dir, o)) return why;
  if (auto why = marker_mismatch(o.dir.get(), kind)) return why;
  Level top = kind == DirKind::archive ? Level::archive_top : Level::any;
  if (auto why = misfit_tree(o.dir.get(), top, dir, 0)) {
    return fmt::format("it holds more than eziotrace wrote: {}", *why);
  }
  return std::nullopt;
}

void make_with_marker(const fs::path& dir, DirKind kind) {
  std::error_code ec;
  if (!dir.parent_path().empty()) fs::create_directories(dir.parent_path(), ec);
  if (mkdir(dir.c_str(), 0755) != 0) fail("cannot create {}: {}", dir.string(), errno_text(errno));
  std::string text = marker_text(kind);
  fs::path marker = dir / kMarkerName;
  UniqueFd fd(open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  bool ok = fd && write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  if (!ok || close(fd.release()) != 0) {
    if (ok) err = errno;
    unlink(marker.c_str());
    rmdir(dir.c_str());
    fail("cannot create {}: {}", dir.string(), errno_text(err));
  }
}

}  // namespace

fs::path output_path(const std::string& arg, const std::string& program) {
  if (arg.empty()) {
    std::string name = fs::path(program).filename().string();
    if (name.empty()) name = "trace";
    return fs::current_path() / (name + "_eziotrace");
  }
  fs::path p = fs::absolute(arg);
  while (p.has_relative_path() && p.filename().empty()) p = p.parent_path();  // "dir/"
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    fail(
        "-o {}: name the archive's own directory (a new one, or an archive to replace with "
        "--force), not {}",
        arg, name.empty() ? "/" : name);
  }
  return p;
}

std::optional<std::string> why_not_removable(const fs::path& dir, DirKind kind) {
  Opened o;
  return why_not(o, dir, kind);
}

void remove_own(const fs::path& dir, DirKind kind) {
  Opened o;
  if (auto why = why_not(o, dir, kind)) {
    fail("not removing {}: {}", dir.string(), *why);
  }
  std::vector<UniqueFd> removed;
  remove_tree(o.dir.get(), kind == DirKind::archive ? Level::archive_top : Level::any, dir, true,
              removed);
  if (unlinkat(o.parent.get(), o.name.c_str(), AT_REMOVEDIR) != 0) {
    close_at_once(removed);
    fail("cannot remove {}: {}", dir.string(), errno_text(errno));
  }
  removed.push_back(std::move(o.dir));
  close_at_once(removed);
}

void check_output(const fs::path& out, bool force) {
  struct stat st {};
  if (lstat(out.c_str(), &st) != 0) return;
  if (!force) {
    fail("{} already exists; remove it, choose another with -o, or pass --force", out.string());
  }
  if (auto why = why_not_removable(out, DirKind::archive)) {
    fail("{} exists and eziotrace will not replace it, even with --force: {}", out.string(), *why);
  }
}

OwnedDir::OwnedDir(fs::path dir, DirKind kind, bool force) : dir_(std::move(dir)), kind_(kind) {
  struct stat st {};
  if (lstat(dir_.c_str(), &st) == 0) {
    if (auto why = why_not_removable(dir_, kind_)) {
      fail(
          "{} is in the way and eziotrace will not remove it: {}. Move it away, or choose "
          "another output with -o",
          dir_.string(), *why);
    }
    if (!force) {
      fail(
          "{} was left by an eziotrace run that did not finish (or one still running); remove "
          "it, or pass --force",
          dir_.string());
    }
    remove_own(dir_, kind_);
  }
  make_with_marker(dir_, kind_);
}

OwnedDir::~OwnedDir() { remove(); }

void OwnedDir::remove() {
  if (keep_) return;
  keep_ = true;  // removed, or left with a warning: nothing more to do
  try {
    remove_own(dir_, kind_);
  } catch (const Error& e) {
    spdlog::warn("{}; left in place", e.what());
  }
}

void OwnedDir::move_into(const fs::path& to) {
  if (rename(dir_.c_str(), to.c_str()) != 0) {
    fail("cannot move {} to {}: {}", dir_.string(), to.string(), errno_text(errno));
  }
  keep_ = true;
  unlink((to / kMarkerName).c_str());
}

fs::path staging_dir(const fs::path& out) {
  fs::path s = out;
  s += ".incomplete";
  return s;
}

Staging::Staging(fs::path out, bool force)
    : out_((check_output(out, force), std::move(out))),
      force_(force),
      dir_(staging_dir(out_), DirKind::archive, force) {}

void Staging::publish(bool read_back) {
  if (read_back) otf2::verify_written(dir() / schema::kAnchorFile);
  struct stat st {};
  if (lstat(out_.c_str(), &st) == 0) {
    check_output(out_, force_);
    remove_own(out_, DirKind::archive);
  }
  // Never onto something that appeared meanwhile (rename() would replace an empty directory).
  int moved = renameat2(AT_FDCWD, dir().c_str(), AT_FDCWD, out_.c_str(), RENAME_NOREPLACE);
  bool unsupported = errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP;
  if (moved != 0 && unsupported && lstat(out_.c_str(), &st) != 0) {  // no NOREPLACE on this fs
    moved = rename(dir().c_str(), out_.c_str());
  }
  if (moved != 0) {
    fail("cannot move the archive to {}: {}", out_.string(), errno_text(errno));
  }
  dir_.keep();  // it is out_ now
}

}  // namespace ezio
