// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Which I/O layer a region belongs to and which kind of operation it performs, from the naming
// conventions of docs/trace-model.md.
#include <array>
#include <optional>
#include <string_view>

namespace ezio::analysis {

// In stack order, top first: the user-level layers of common/schema/layers.h (kUserLayers: HDF5,
// MPI-IO, then POSIX and every other user region as kUser), then the kernel's.
enum class Layer { kHdf5, kMpiIo, kUser, kSyscall, kVfs, kFs, kPageCache, kBlock };
inline constexpr size_t kLayerCount = 8;
inline constexpr std::array<Layer, kLayerCount> kAllLayers = {
    Layer::kHdf5, Layer::kMpiIo, Layer::kUser,      Layer::kSyscall,
    Layer::kVfs,  Layer::kFs,    Layer::kPageCache, Layer::kBlock};
// The layers above POSIX, which only their own EZTrace modules record.
inline constexpr std::array<Layer, 2> kUpperLayers = {Layer::kHdf5, Layer::kMpiIo};

// HDF5, MPI-IO and User: recorded by EZTrace, regions named without a "<layer>:" prefix.
constexpr bool is_user_level(Layer l) { return l <= Layer::kUser; }
// `inner` may lie inside `outer` in a well-formed stack: not above it.
constexpr bool may_nest(Layer outer, Layer inner) { return outer <= inner; }

enum class Op { kRead, kWrite, kOther };
inline constexpr size_t kOpCount = 3;
inline constexpr std::array<Op, kOpCount> kAllOps = {Op::kRead, Op::kWrite, Op::kOther};

// "HDF5", "MPI-IO", "User", "Syscall", "VFS", "FS", "Page cache", "Block": the row names users
// read.
std::string_view layer_title(Layer l);
// "hdf5", "mpiio", "user", "syscall", "vfs", "fs", "pagecache", "block": the kernel layers'
// canonical-name prefixes, and the spelling accepted by --layer and used in JSON/CSV.
std::string_view layer_key(Layer l);
std::optional<Layer> parse_layer(std::string_view s);
// The user-level layer whose module defines the IoParadigm `name` ("HDF5", "MPI-IO").
std::optional<Layer> layer_of_paradigm(std::string_view name);
std::string_view op_name(Op o);

// Layer from the canonical name; names without a known "<layer>:" prefix are user-level, in the
// user layer whose regions they name (schema::user_layer_of_region).
Layer layer_of(std::string_view canonical_name);
// Name without the layer prefix ("syscall:write" -> "write").
std::string_view short_name(std::string_view canonical_name);
// Guess from the function name, used when the call carries no I/O operation event.
Op op_from_name(std::string_view name);

}  // namespace ezio::analysis
