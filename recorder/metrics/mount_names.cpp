// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/mount_names.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "metrics.h"

namespace ezio::recorder::metrics {
namespace {

// The common ones, for mounts the table does not show (another mount namespace's, gone since).
const char* magic_name(uint32_t magic) {
  switch (magic) {
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0x6969:
      return "nfs";
    case 0x0BD00BD0:
      return "lustre";
    case 0x47504653:
      return "gpfs";
    case 0x794C7630:
      return "overlay";
    case 0x65735546:
      return "fuse";
    case 0x2FC12FC1:
      return "zfs";
    default:
      return nullptr;
  }
}

// The mount ids of a mountinfo file.
std::set<uint32_t> ids_in(const std::string& mountinfo) {
  std::ifstream in(mountinfo);
  std::set<uint32_t> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    uint32_t id = 0;
    if (f >> id) out.insert(id);
  }
  return out;
}

}  // namespace

std::set<uint32_t> mounted_in_other_namespaces(const std::set<uint32_t>& ids) {
  std::set<uint32_t> out;
  struct stat st {};
  if (ids.empty() || stat("/proc/self/ns/mnt", &st) != 0) return out;
  std::set<ino_t> namespaces = {st.st_ino};  // ours: its table is MountNames'
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string pid = it->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    // A process gone meanwhile, or a kernel thread's namespace seen already: skipped.
    if (stat((it->path() / "ns/mnt").c_str(), &st) != 0) continue;
    if (!namespaces.insert(st.st_ino).second) continue;
    for (uint32_t id : ids_in(it->path() / "mountinfo")) {
      if (ids.count(id)) out.insert(id);
    }
  }
  return out;
}

void MountNames::read_table() {
  if (read_) return;
  read_ = true;
  std::ifstream in("/proc/self/mountinfo");
  std::map<uint32_t, Entry> ids, devs;
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root point options [optional…] - fstype source super-options
    std::istringstream f(line);
    uint32_t id = 0, parent = 0, major = 0, minor = 0;
    char colon = 0;
    std::string root, point, word;
    if (!(f >> id >> parent >> major >> colon >> minor >> root >> point)) continue;
    while (f >> word && word != "-") {
    }
    Entry e{point, {}, (major << 20) | minor};
    f >> e.fstype;
    ids[id] = e;
    devs.emplace((major << 20) | minor, e);  // the first mount of the device
  }
  before_ = std::move(by_id_);
  by_id_ = std::move(ids);
  by_dev_ = std::move(devs);
}

std::string MountNames::fstype_of(uint32_t magic, const std::string& from_table) const {
  if (!from_table.empty()) return from_table;
  if (const char* name = magic_name(magic)) return name;
  return fmt::format("0x{:x}", magic);
}

MountLabels MountNames::of_mount(uint32_t mnt, uint32_t magic) {
  if (mnt == EZIO_M_MNT_OTHER) return {"(other)", fstype_of(magic, {})};
  read_table();
  auto it = by_id_.find(mnt);
  if (it == by_id_.end()) return {fmt::format("(id {})", mnt), fstype_of(magic, {})};
  return {it->second.point, fstype_of(magic, it->second.fstype)};
}

MountLabels MountNames::of_ended_mount(uint32_t mnt, uint32_t magic) {
  read_table();
  auto it = before_.find(mnt);
  if (it == before_.end()) return {fmt::format("(id {})", mnt), fstype_of(magic, {})};
  return {it->second.point, fstype_of(magic, it->second.fstype)};
}

bool MountNames::mounted(uint32_t mnt) {
  read_table();
  return by_id_.count(mnt) > 0;
}

bool MountNames::replaced(uint32_t mnt) {
  read_table();
  auto now = by_id_.find(mnt), then = before_.find(mnt);
  return now != by_id_.end() && then != before_.end() && !(now->second == then->second);
}

MountLabels MountNames::of_device(uint32_t dev, uint32_t magic) {
  read_table();
  auto it = by_dev_.find(dev);
  if (it == by_dev_.end()) return {"", fstype_of(magic, {})};
  return {it->second.point, fstype_of(magic, it->second.fstype)};
}

}  // namespace ezio::recorder::metrics
