// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/cgroup_names.h"

#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

#include "common/error.h"

namespace ezio::recorder::metrics {

namespace fs = std::filesystem;

fs::path cgroup2_mount() {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // id parent maj:min root mount-point options [optional fields] - fstype source super-options
    std::istringstream f(line);
    std::string id, parent, devno, root, mount_point, word;
    f >> id >> parent >> devno >> root >> mount_point;
    while (f >> word && word != "-") {
    }
    std::string fstype;
    f >> fstype;
    if (fstype == "cgroup2") return mount_point;
  }
  fail(
      "there is no cgroup v2 hierarchy mounted (no cgroup2 in /proc/self/mountinfo): the "
      "metrics are kept per cgroup v2");
}

std::optional<std::string> slurm_job_id(const std::string& cgroup_path) {
  static const std::regex job("/job_([0-9]+)(/|$)");
  std::smatch m;
  if (std::regex_search(cgroup_path, m, job)) return m[1].str();
  return std::nullopt;
}

void CgroupNames::walk() {
  paths_.clear();
  std::error_code ec;
  struct stat st {};
  if (stat(mount_.c_str(), &st) == 0) paths_[st.st_ino] = "/";
  for (fs::recursive_directory_iterator
           it(mount_, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    if (stat(it->path().c_str(), &st) != 0) continue;  // removed meanwhile
    paths_[st.st_ino] = "/" + fs::relative(it->path(), mount_, ec).string();
  }
  for (const auto& [id, path] : paths_) seen_[id] = path;
  walked_ = true;
}

std::optional<std::string> CgroupNames::path_of(uint64_t id) {
  auto it = paths_.find(id);
  if (it == paths_.end() && !walked_) {
    walk();
    it = paths_.find(id);
  }
  if (it == paths_.end()) return std::nullopt;
  // A cgroup removed since the last walk: its directory is gone, or another cgroup of that name
  // took its place (ids are never reused).
  struct stat st {};
  if (stat((mount_ / it->second.substr(1)).c_str(), &st) != 0 || st.st_ino != id) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<std::string> CgroupNames::last_path_of(uint64_t id) const {
  auto it = seen_.find(id);
  if (it == seen_.end()) return std::nullopt;
  return it->second;
}

}  // namespace ezio::recorder::metrics
