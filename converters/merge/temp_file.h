// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The merge's scratch files: unlinked at once, on the output's file system.
#include <filesystem>
#include <string_view>

#include "common/unique_fd.h"

namespace ezio::converters {

// An anonymous file in dir, gone when it is closed; fails naming dir and what it was for.
UniqueFd temporary_file(const std::filesystem::path& dir);

// pwrite/pread of exactly `bytes` at `offset`, or ezio::Error naming dir.
void write_fully(int fd, const void* data, size_t bytes, uint64_t offset,
                 const std::filesystem::path& dir);
void read_fully(int fd, void* data, size_t bytes, uint64_t offset,
                const std::filesystem::path& dir);

}  // namespace ezio::converters
