// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A kernel archive written the way docs/trace-model.md says the recorder writes it, built from a
// real EZTrace run: every user call that always reaches the kernel gets its system call strictly
// inside its time span, plus the calls a recording also holds (fsync, EZTrace's own I/O, the
// `rm` child with its page-cache metric location, block requests linked by call.id).
#include <filesystem>
#include <vector>

#include "converters/merge/merge.h"

namespace ezio::test {

struct SyntheticCounts {
  size_t syscalls_in_user_calls = 0;
  size_t own_io_calls = 0;  // written on traced threads, to be filtered by the merge
  // Block requests on "block vda": one caused by EZTrace's own trace write (to be dropped with
  // it), one caused by the application's fsync (kept), by call.id.
  uint64_t own_block_call = 0, app_block_call = 0;
};

// lost_syscalls: the archive's EZIOTRACE::LOST::syscall (the events written are the same).
// tap: given every event as it is written, as the recorder gives them to the merged mode's merge;
// with write_events false, only to it (no event file, as eziotrace run's part unless kept).
SyntheticCounts write_synthetic_kernel(const std::vector<converters::EztraceInput>& inputs,
                                       const std::filesystem::path& dir, uint64_t lost_syscalls = 0,
                                       otf2::EventTap* tap = nullptr, bool write_events = true);

}  // namespace ezio::test
