// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The labels of the VFS and FS series: a mount id to its mount point and file-system type, a super
// block's device to its first mount, a file-system magic to its type's name (from
// /proc/self/mountinfo, read once per refresh(): mount ids are reused after an unmount).
#include <cstdint>
#include <map>
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
  // Lets the next question read the mount table again.
  void refresh() { read_ = false; }

 private:
  struct Entry {
    std::string point, fstype;
  };
  void read_table();
  std::string fstype_of(uint32_t magic, const std::string& from_table) const;
  std::map<uint32_t, Entry> by_id_;
  std::map<uint32_t, Entry> by_dev_;  // kernel dev_t (MAJOR << 20 | MINOR)
  bool read_ = false;
};

}  // namespace ezio::recorder::metrics
