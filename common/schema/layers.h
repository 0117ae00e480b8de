// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The layers of a trace by the names the archive gives them (EZIOTRACE::LOST::<layer>,
// EZIOTRACE::PROBE::<layer>, the "<layer>:" prefix of region canonical names, --layers).
#include <array>
#include <string_view>

namespace ezio::schema {

// The kernel's layers in enum ezio_layer order (bpf/record.h); "process" is the fork/exec/exit
// bookkeeping, recorded always and never a layer of its own in the analyzers.
inline constexpr std::array<std::string_view, 6> kKernelLayers = {"syscall",   "vfs",   "fs",
                                                                  "pagecache", "block", "process"};
// The kernel layers that hold I/O calls or page and block events (the first five above).
inline constexpr std::array<std::string_view, 5> kKernelIoLayers = {"syscall", "vfs", "fs",
                                                                    "pagecache", "block"};
// EZTrace's calls in a merged archive.
inline constexpr std::string_view kUserLayer = "user";

// The user-level stack, top first: HDF5 over MPI-IO over POSIX (EZTrace's posixio, the "user"
// layer, which also holds every user region of no other layer). A layer is known by its regions'
// names (EZTrace modules name a region after the function and give it no "<layer>:" prefix) and
// by the OTF2 IoParadigm of its handles. Adding a layer here is all the analyzers, the report and
// the timeline views need (the analysis model's Layer enum follows this order).
struct UserLayerSpec {
  std::string_view key;            // canonical spelling: --layer, JSON, CSV, Pajé row names
  std::string_view title;          // the row name users read
  std::string_view paradigm;       // the IoParadigm its module defines ("" for none)
  std::string_view region_prefix;  // the function names of its regions ("" for none)
};
inline constexpr std::array<UserLayerSpec, 3> kUserLayers = {{
    {"hdf5", "HDF5", "HDF5", "H5"},
    {"mpiio", "MPI-IO", "MPI-IO", "MPI_File_"},
    {kUserLayer, "User", "", ""},
}};

// The user layer a region named `name` belongs to (an index into kUserLayers): the first whose
// prefix it starts with, followed for HDF5 by the API's upper-case class letter (H5Dwrite, not
// H5open); the last (POSIX and everything else) otherwise.
constexpr size_t user_layer_of_region(std::string_view name) {
  for (size_t i = 0; i + 1 < kUserLayers.size(); ++i) {
    std::string_view p = kUserLayers[i].region_prefix;
    if (!name.starts_with(p) || name.size() <= p.size()) continue;
    char next = name[p.size()];
    if (p == "H5" && (next < 'A' || next > 'Z')) continue;
    return i;
  }
  return kUserLayers.size() - 1;
}

// The kernel layer's name, "unknown" out of range.
constexpr std::string_view kernel_layer_name(unsigned layer) {
  return layer < kKernelLayers.size() ? kKernelLayers[layer] : "unknown";
}

}  // namespace ezio::schema
