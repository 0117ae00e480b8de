// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Which I/O layer a region belongs to and which kind of operation it performs, from the naming
// conventions of docs/trace-model.md.
#include <array>
#include <optional>
#include <string_view>

namespace ezio::analysis {

enum class Layer { kUser, kSyscall, kVfs, kFs, kPageCache, kBlock };
inline constexpr size_t kLayerCount = 6;
inline constexpr std::array<Layer, kLayerCount> kAllLayers = {
    Layer::kUser, Layer::kSyscall, Layer::kVfs, Layer::kFs, Layer::kPageCache, Layer::kBlock};

enum class Op { kRead, kWrite, kOther };
inline constexpr size_t kOpCount = 3;
inline constexpr std::array<Op, kOpCount> kAllOps = {Op::kRead, Op::kWrite, Op::kOther};

// "User", "Syscall", "VFS", "FS", "Page cache", "Block": the row names users read.
std::string_view layer_title(Layer l);
// "user", "syscall", "vfs", "fs", "pagecache", "block": the canonical-name prefixes (and the
// spelling accepted by --layer and used in JSON/CSV).
std::string_view layer_key(Layer l);
std::optional<Layer> parse_layer(std::string_view s);
std::string_view op_name(Op o);

// Layer from the canonical name; names without a known "<layer>:" prefix are user-level.
Layer layer_of(std::string_view canonical_name);
// Name without the layer prefix ("syscall:write" -> "write").
std::string_view short_name(std::string_view canonical_name);
// Guess from the function name, used when the call carries no I/O operation event.
Op op_from_name(std::string_view name);

}  // namespace ezio::analysis
