// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Names of the file-system layer's events (enum ezio_fs_op).
#include <cstdint>
#include <string_view>

namespace ezio::recorder {

// The kernel function or tracepoint name, e.g. "ext4_file_write_iter", "ext4_da_write_begin".
std::string_view fs_op_name(uint16_t op);
bool fs_op_reads(uint16_t op);
bool fs_op_writes(uint16_t op);

}  // namespace ezio::recorder
