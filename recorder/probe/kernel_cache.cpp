// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/probe/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "common/unique_fd.h"
#include "recorder/probe/core_btf.h"
#include "recorder/probe/probe_plan_json.h"

namespace fs = std::filesystem;

namespace ezio::recorder {
namespace {

// FNV-1a: the key only has to change with what it is made of.
struct KeyHash {
  uint64_t h = 14695981039346656037ull;
  void add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // separator: ("ab","c") differs from ("a","bc")
  }
  void add(uint64_t v) { add(std::string_view(reinterpret_cast<const char*>(&v), sizeof(v))); }
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The kernel (its build id note, release and version; each module's BTF, as a module loaded
// since may bring hooks and types), this executable (a rebuilt eziotrace may probe differently),
// and the hooks denied for tests.
std::string cache_key() {
  KeyHash k;
  k.add(read_all("/sys/kernel/notes"));
  utsname u{};
  uname(&u);
  k.add(u.release);
  k.add(u.version);
  std::vector<std::pair<std::string, uint64_t>> btfs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/kernel/btf", ec)) {
    btfs.emplace_back(e.path().filename().string(), e.file_size(ec));
  }
  std::sort(btfs.begin(), btfs.end());
  for (const auto& [name, size] : btfs) {
    k.add(name);
    k.add(size);
  }
  struct stat exe {};
  stat("/proc/self/exe", &exe);
  for (uint64_t v : {uint64_t(exe.st_dev), uint64_t(exe.st_ino), uint64_t(exe.st_size),
                     uint64_t(exe.st_mtim.tv_sec), uint64_t(exe.st_mtim.tv_nsec)}) {
    k.add(v);
  }
  const char* deny = getenv("EZIOTRACE_DENY_HOOKS");
  k.add(deny ? deny : "");
  return fmt::format("{:016x}", k.h);
}

fs::path default_dir() {
  if (const char* d = getenv("EZIOTRACE_CACHE_DIR"); d && *d) return d;
  // A directory of its own inside eziotraced's (made 0755 as eziotraced makes it, when missing):
  // the socket's directory stays reachable by the service's group, the cache's is 0700.
  if (geteuid() == 0) {
    mkdir("/run/eziotrace", 0755);
    return "/run/eziotrace/cache";
  }
  if (const char* x = getenv("XDG_RUNTIME_DIR"); x && *x) return fs::path(x) / "eziotrace";
  return {};
}

// Only a directory that no one else can write into is trusted: a plan decides what is loaded
// into the kernel.
bool usable(const fs::path& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    spdlog::debug("no probe cache: cannot create {}: {}", dir.string(), errno_text(errno));
    return false;
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 022) != 0) {
    // Readable by others is fine (a socket's directory, mode 0755, may hold the cache).
    spdlog::debug("no probe cache: {} is not a directory only this user can write to",
                  dir.string());
    return false;
  }
  return true;
}

// Written whole under another name, then renamed: a reader never sees half a file.
void write_atomically(const fs::path& path, const std::string& text) {
  std::string tmp = path.string() + ".XXXXXX";
  UniqueFd fd(mkstemp(tmp.data()));
  if (!fd) return;
  bool ok = write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  fd.reset();
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) unlink(tmp.c_str());
}

std::string layer_mask(const LayerSet& layers) {
  unsigned m = 0;
  for (unsigned l = 0; l < layers.size(); ++l) m |= unsigned(layers[l]) << l;
  return fmt::format("{:02x}", m);
}

// A file this cache wrote: a regular file named <16 hex digits of a key>.<what>. Nothing else in
// the directory is the cache's: it may be shared (EZIOTRACE_CACHE_DIR; as root it was once
// /run/eziotrace itself, where eziotraced's socket lives).
bool is_cache_file(const fs::directory_entry& e, const std::string& name) {
  std::error_code ec;
  if (!e.is_regular_file(ec) || e.is_symlink(ec) || name.size() <= 17 || name[16] != '.')
    return false;
  return std::all_of(name.begin(), name.begin() + 16,
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::future<std::string> ready(std::string value) {
  std::promise<std::string> p;
  p.set_value(std::move(value));
  return p.get_future();
}

}  // namespace

KernelCache::KernelCache(bool enabled) {
  if (!enabled) return;
  fs::path dir = default_dir();
  if (dir.empty() || !usable(dir)) return;
  dir_ = dir;
  key_ = cache_key();
}

fs::path KernelCache::file(const std::string& suffix) const { return dir_ / (key_ + suffix); }

std::optional<ProbePlan> KernelCache::plan(const LayerSet& layers) const {
  if (dir_.empty()) return std::nullopt;
  fs::path path = file(".plan-" + layer_mask(layers) + ".json");
  std::string text = read_all(path);
  if (text.empty()) return std::nullopt;
  auto plan = plan_from_json(nlohmann::json::parse(text, nullptr, false));
  if (plan) {
    spdlog::debug("hook plan from {}", path.string());
  } else {
    spdlog::debug("ignoring the unreadable probe plan {}", path.string());
  }
  return plan;
}

void KernelCache::keep_plan(const LayerSet& layers, const ProbePlan& plan) const {
  if (dir_.empty()) return;
  // Files of other keys belong to another kernel boot's modules or another build: dropped, so
  // that the directory does not grow with every rebuild.
  remove_files(false);
  write_atomically(file(".plan-" + layer_mask(layers) + ".json"), plan_to_json(plan).dump());
}

std::future<std::string> KernelCache::core_btf() const {
  if (dir_.empty()) return ready("");
  fs::path btf = file(".core.btf"), none = file(".core.none");
  std::error_code ec;
  if (fs::exists(btf, ec)) return ready(btf.string());
  if (fs::exists(none, ec)) return ready("");
  return std::async(std::launch::async, [btf, none] {
    if (make_core_btf(btf)) return btf.string();
    write_atomically(none, "");  // not tried again until the key changes
    return std::string();
  });
}

AttachIds KernelCache::attach_ids(const std::vector<std::string>& sections) const {
  if (dir_.empty()) return find_attach_ids(sections);
  fs::path path = file(".attach-ids");  // not .json: that ending is the plans'

  std::string text = read_all(path);
  AttachIds kept = text.empty() ? AttachIds{}
                                : attach_ids_from_json(nlohmann::json::parse(text, nullptr, false));
  std::vector<std::string> missing;
  for (const auto& s : sections) {
    if (!kept.count(s)) missing.push_back(s);
  }
  if (missing.empty()) {
    spdlog::debug("attach points from {}", path.string());
    return kept;
  }
  kept.merge(find_attach_ids(missing));
  spdlog::debug("{} attach points found in the kernel's BTF", missing.size());
  write_atomically(path, attach_ids_to_json(kept).dump());
  return kept;
}

void KernelCache::forget() const {
  if (dir_.empty()) return;
  remove_files(true);
  write_atomically(file(".core.none"), "");
}

void KernelCache::remove_files(bool of_this_key) const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    if (is_cache_file(e, name) && name.starts_with(key_) == of_this_key) fs::remove(e.path(), ec);
  }
}

}  // namespace ezio::recorder
