// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The block layer of an archive: one location per block device the target used, each completed
// request as IoOperationBegin (created) / IoOperationIssued (sent to the driver) /
// IoOperationComplete, with the attributed thread and call as attributes (docs/trace-model.md).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/otf2/writer.h"
#include "recorder/archive/kernel_archive.h"
#include "recorder/core/device_use.h"
#include "recorder/decode/record_store.h"

namespace ezio::recorder {

// Written while the recording goes on: requests arrive when they complete, in any order, and
// each device's events are written in time order once no earlier one can still come.
class BlockLayer {
 public:
  BlockLayer(otf2::ArchiveWriter& w, otf2::Ref machine, ArchiveSummary& summary);
  ~BlockLayer();
  BlockLayer(const BlockLayer&) = delete;
  BlockLayer& operator=(const BlockLayer&) = delete;

  // Takes completed requests.
  void add(std::vector<ezio_block_rec>&& requests);
  // Writes the events before t; fills the block totals.
  void write_before(uint64_t t);
  // Writes what is left, and the device locations with their unattributed counts (every device
  // the target used gets one); returns the time of the last event written (0 if none).
  uint64_t finish(const DeviceUse& use);

 private:
  struct Device;
  struct PendingEvent;
  struct Attrs {
    otf2::TypedAttribute pid, tid, call_id, sector, queue_ns, service_ns, op, flags, cause,
        shared_bytes;
  };
  Device& device(uint32_t dev, std::string_view kernel_name);
  void define_common();
  void write(Device& d, const otf2::EventWriter& evt, const PendingEvent& e);

  otf2::ArchiveWriter& w_;
  otf2::Ref machine_;
  ArchiveSummary& summary_;
  bool defined_ = false;
  Attrs a_{};
  otf2::Ref paradigm_ = 0;
  std::map<uint32_t, Device> devices_;  // by kernel dev_t
  uint64_t last_ = 0;
};

// "read", "write", "flush", "discard", … from the operation in the low bits of cmd_flags.
const char* block_op_name(uint32_t cmd_flags);
// "sync,fua,preflush,meta" or "" for the REQ_* flags that matter to a reader.
std::string block_flag_names(uint32_t cmd_flags);

}  // namespace ezio::recorder
