// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/device_use.h"

#include <bpf/bpf.h>
#include <fmt/format.h>

#include <fstream>

#include "record.h"
#include "recorder/core/bpf_map_walk.h"

namespace ezio::recorder {
uint32_t dev_major(uint32_t dev) { return dev >> 20; }
uint32_t dev_minor(uint32_t dev) { return dev & 0xfffff; }

std::map<uint32_t, UnattributedIo> read_unattributed(int unattributed_fd) {
  std::map<uint32_t, UnattributedIo> out;
  for_each_key(unattributed_fd, [&](uint32_t dev) {
    ezio_block_unattributed v{};
    if (bpf_map_lookup_elem(unattributed_fd, &dev, &v) == 0) out[dev] = {v.requests, v.bytes};
  });
  return out;
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
