// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Hosts' parts of one 2-rank MPI job as `eziotrace run -- srun` makes them (docs/cluster.md):
// each host's part is the one-node merge of the job's EZTrace archive with that host's alignment
// data, so it lists both ranks in its communicators, its own rank on its thread's location and
// the other host's rank on an eventless stand-in (converters/merge/locations.cpp).
#include <cstdint>
#include <filesystem>
#include <string>

namespace ezio::test {

// The part of rank `rank` (0 or 1) on host `host`, thread 200 (on both hosts), the other rank's
// stand-in location 201. Communicators: MPI_COMM_WORLD and "comm dup" of both ranks, "comm split"
// of this rank alone (each rank's split communicator is another), MPI_Comm_Self (of the POSIX
// handle that both ranks open at 400-500, as EZTrace's handles). Events: rank 0
// sends 4 bytes (tag 7, MPI_COMM_WORLD) at 1000-1100 that rank 1 receives in 900-1200; rank 1
// sends (tag 8, "comm dup") at 2000-2100, received by rank 0 in 3000-3400; both then run a
// barrier on their split communicator at 5000-5100 (without point_to_point, only the barrier).
// A host other than "node1" gets a clock file to "node1" of offset_ns (node1's clock minus its
// own: its events offset_ns later on node1's timeline). own_names: each part names its
// sub-communicators as EZTrace's ranks number them, "MPI_COMM_<rank * 1073741823 + n>", rank 1
// defining its split before its dup, and both parts add a second dup of MPI_COMM_WORLD ("comm
// dup 2" or its number) and a communicator of both ranks whose parent is the first dup ("comm of
// dup", or its number), on each of which both run a barrier (at 6000-6100 and 7000-7100).
// Returns the part's directory.
std::filesystem::path write_mpi_part(const std::filesystem::path& dir, const std::string& host,
                                     int rank, bool point_to_point = true, int64_t offset_ns = 0,
                                     bool own_names = false);

}  // namespace ezio::test
