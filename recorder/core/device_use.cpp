// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/device_use.h"

#include <bpf/bpf.h>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "record.h"
#include "recorder/core/bpf_map_walk.h"

namespace ezio::recorder {
uint32_t dev_major(uint32_t dev) { return dev >> 20; }
uint32_t dev_minor(uint32_t dev) { return dev & 0xfffff; }

std::map<uint32_t, UnattributedIo> read_unattributed(int unattributed_fd) {
  std::map<uint32_t, UnattributedIo> out;
  for_each_key(unattributed_fd, [&](uint32_t dev) {
    ezio_block_unattributed v{};
    if (bpf_map_lookup_elem(unattributed_fd, &dev, &v) == 0)
      out[dev] = {v.requests, v.bytes, v.not_issued};
  });
  return out;
}

void add_device_requests(std::map<uint32_t, UnattributedIo>& table) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/dev/block", ec)) {
    unsigned major = 0, minor = 0;
    if (std::sscanf(e.path().filename().c_str(), "%u:%u", &major, &minor) != 2) continue;
    std::ifstream in(e.path() / "stat");
    std::vector<uint64_t> f;
    for (uint64_t v; in >> v;) f.push_back(v);
    if (f.size() < 11) continue;
    // reads, writes completed; discards (4.18) and flushes (5.5) when the kernel counts them
    uint64_t n = f[0] + f[4] + (f.size() > 11 ? f[11] : 0) + (f.size() > 15 ? f[15] : 0);
    // sectors read, written, discarded: 512 bytes each whatever the device's block size
    uint64_t sectors = f[2] + f[6] + (f.size() > 13 ? f[13] : 0);
    UnattributedIo& u = table[(major << 20) | minor];
    u.device = n;
    u.device_bytes = sectors * 512;
    u.device_read = true;
  }
}

uint64_t unattributed_table_id(int unattributed_fd) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(unattributed_fd, &info, &len) != 0 || info.id == 0) return 0;
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  // FNV-1a: the boot id and the map's id in one number (a location property is a number).
  uint64_t h = 14695981039346656037ull;
  for (char c : fmt::format("{}/{}", boot, info.id)) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return h ? h : 1;
}

std::map<uint32_t, UnattributedIo> unattributed_since(
    const std::map<uint32_t, UnattributedIo>& now, const std::map<uint32_t, UnattributedIo>& base) {
  std::map<uint32_t, UnattributedIo> out;
  for (const auto& [dev, n] : now) {
    UnattributedIo b;
    if (auto it = base.find(dev); it != base.end()) b = it->second;
    UnattributedIo d{n.requests - b.requests, n.bytes - b.bytes, n.not_issued - b.not_issued};
    if (d.requests || d.bytes || d.not_issued) out[dev] = d;
  }
  return out;
}

uint64_t unfinished_requests(int block_reqs_fd, uint32_t id) {
  uint64_t n = 0;
  for_each_key<uint64_t>(block_reqs_fd, [&](uint64_t rq) {
    ezio_blk_req v{};
    if (bpf_map_lookup_elem(block_reqs_fd, &rq, &v) != 0) return;  // completed meanwhile
    for (uint32_t i = 0; i < v.owners_n && i < EZIO_BLOCK_OWNERS; ++i) {
      if (v.owners[i].who.session == id) {
        ++n;
        return;
      }
    }
  });
  return n;
}

uint64_t wait_requests_done(int block_reqs_fd, uint32_t id, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  uint64_t left;
  while ((left = unfinished_requests(block_reqs_fd, id)) > 0 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return left;
}

std::string device_name(uint32_t dev, std::string_view kernel_name) {
  std::ifstream in(fmt::format("/sys/dev/block/{}:{}/uevent", dev_major(dev), dev_minor(dev)));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("DEVNAME=", 0) == 0) return line.substr(8);
  }
  if (!kernel_name.empty()) return std::string(kernel_name);
  return fmt::format("{}:{}", dev_major(dev), dev_minor(dev));
}

}  // namespace ezio::recorder
