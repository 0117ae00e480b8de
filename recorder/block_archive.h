#pragma once
// The block layer of an archive: one location per block device the target used, each completed
// request as IoOperationBegin (created) / IoOperationIssued (sent to the driver) /
// IoOperationComplete, with the attributed thread and call as attributes (docs/trace-model.md).
#include <cstdint>

#include "common/otf2/writer.h"
#include "recorder/kernel_archive.h"
#include "recorder/record_store.h"

namespace ezio::recorder {

// Writes the device locations, their events and the unattributed counts; fills the block totals
// and returns the time of the last event written (0 if none).
uint64_t write_block_layer(otf2::ArchiveWriter& w, otf2::Ref machine, const RecordStore& store,
                           ArchiveSummary& summary);

// "read", "write", "flush", "discard", … from the operation in the low bits of cmd_flags.
const char* block_op_name(uint32_t cmd_flags);
// "sync,fua,preflush,meta" or "" for the REQ_* flags that matter to a reader.
std::string block_flag_names(uint32_t cmd_flags);

}  // namespace ezio::recorder
