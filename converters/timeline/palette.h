// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The fixed colours of the timeline exports: one family per layer, one shade per kind of
// operation, the same in every trace (docs/timeline.md, "The views and their colours"). The OTF2
// archive's region groups use the same classification (common/otf2), so the plain archive reads
// alike in ViTE.
#include <cstdint>
#include <string_view>

#include "analysis/model/layer.h"

namespace ezio::converters {

struct Rgb {
  uint8_t r, g, b;
};

// What an operation does to a file, for its shade: data in, data out, durability, or metadata
// (open, close, seek, mmap...).
enum class OpKind { kRead, kWrite, kSync, kMetadata };
inline constexpr size_t kOpKindCount = 4;
std::string_view op_kind_name(OpKind k);
// From the function's name (without layer prefix): "fsync" syncs, "pwrite64" writes.
OpKind op_kind_of(std::string_view name);

// Layers drawn as rows of a thread: HDF5, MPI-IO, user, syscall, VFS, FS.
Rgb call_colour(analysis::Layer layer, OpKind kind);

// Block requests: read, write, flush (discards count as writes, as in the archive's modes).
enum class BlockOp { kRead, kWrite, kFlush };
inline constexpr size_t kBlockOpCount = 3;
std::string_view block_op_name(BlockOp op);
Rgb request_colour(BlockOp op, bool in_service);

// Page-cache variables, per process.
enum class CacheVar { kHits, kMisses, kDirtied, kEvicted };
inline constexpr size_t kCacheVarCount = 4;
size_t cache_var_counter(CacheVar v);          // into schema::pagecache::kCounters
std::string_view cache_var_title(CacheVar v);  // "hits"...
Rgb cache_var_colour(CacheVar v);

}  // namespace ezio::converters
