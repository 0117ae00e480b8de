// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The I/O syscalls of the syscall layer: where their arguments are (for the BPF program) and what
// they mean for the trace (for the OTF2 writer). x86-64 numbering.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "record.h"

namespace ezio::recorder {

enum class IoKind : uint8_t {
  None,   // a region only (mmap, truncate, …)
  Read,   // IoOperation READ on the fd's handle
  Write,  // IoOperation WRITE
  Flush,  // IoOperation FLUSH (fsync family)
  Open,   // creates a handle from the returned fd
  Close,  // destroys the handle of fd
  Seek,   // IoSeek
  Dup,    // duplicates the handle of fd onto the returned fd
};

struct SyscallInfo {
  uint32_t nr;
  std::string_view name;
  IoKind kind;
  ezio_sc_desc desc;
};

std::span<const SyscallInfo> syscall_table();
const SyscallInfo* find_syscall(uint32_t nr);

}  // namespace ezio::recorder
