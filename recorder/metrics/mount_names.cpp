// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/mount_names.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

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

}  // namespace

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
    Entry e{point, {}};
    f >> e.fstype;
    ids[id] = e;
    devs.emplace((major << 20) | minor, e);  // the first mount of the device
  }
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

MountLabels MountNames::of_device(uint32_t dev, uint32_t magic) {
  read_table();
  auto it = by_dev_.find(dev);
  if (it == by_dev_.end()) return {"", fstype_of(magic, {})};
  return {it->second.point, fstype_of(magic, it->second.fstype)};
}

}  // namespace ezio::recorder::metrics
