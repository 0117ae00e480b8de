// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The labels of the VFS and FS series: a mount id to its mount point and file-system type, a super
// block's device to its first mount, a file-system magic to its type's name (from
// /proc/self/mountinfo, read once per refresh(): mount ids are reused after an unmount).
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace ezio::recorder::metrics {

struct MountLabels {
  std::string mount;   // the mount point; "(other)" beyond --metrics-max-mounts, "(id N)" unknown
  std::string fstype;  // ext4, xfs, tmpfs …
};

class MountNames {
 public:
  // A VFS series' labels: its mount id (EZIO_M_MNT_OTHER: the table was full), the super block's
  // magic.
  MountLabels of_mount(uint32_t mnt, uint32_t magic);
  // An FS series' labels: its super block's device (kernel dev_t), its magic; the mount is the
  // first of that device in the mount table.
  MountLabels of_device(uint32_t dev, uint32_t magic);
  // A VFS series' labels when its mount is gone (its last report): those the mount had in the table
  // read before this one; "(id N)" when it came and went between the two.
  MountLabels of_ended_mount(uint32_t mnt, uint32_t magic);
  // Whether the mount is in this mount namespace's table now.
  bool mounted(uint32_t mnt);
  // Whether its id names another mount than at the read before: the kernel gives an unmounted
  // mount's id to the next one.
  bool replaced(uint32_t mnt);
  // Lets the next question read the mount table again.
  void refresh() { read_ = false; }

 private:
  struct Entry {
    std::string point, fstype;
    uint32_t dev = 0;
    bool operator==(const Entry&) const = default;
  };
  void read_table();
  std::string fstype_of(uint32_t magic, const std::string& from_table) const;
  std::map<uint32_t, Entry> by_id_;
  std::map<uint32_t, Entry> by_dev_;  // kernel dev_t (MAJOR << 20 | MINOR)
  std::map<uint32_t, Entry> before_;  // by_id_ of the read before
  bool read_ = false;
};

// Of the mount ids asked, those mounted in a mount namespace other than this one (a container's):
// each namespace's table read once, through one of its processes (/proc/PID/mountinfo).
std::set<uint32_t> mounted_in_other_namespaces(const std::set<uint32_t>& ids);

}  // namespace ezio::recorder::metrics
