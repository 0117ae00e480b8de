// SPDX-License-Identifier: GPL-2.0-only
#include "tests/support/synthetic_mpi.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/otf2/writer.h"
#include "converters/merge/comm_mapper.h"

namespace ezio::test {
namespace {

using otf2::ArchiveWriter;
using otf2::Ref;

constexpr OTF2_LocationRef kThread = 200, kStandIn = 201;
constexpr uint64_t kEztraceRankStride = 1073741823;  // EZTrace's location of rank r: r * this

void write_clock_file(const std::filesystem::path& dir, const std::string& host,
                      int64_t offset_ns) {
  nlohmann::json m = {{"offset_ns", offset_ns}, {"error_ns", 1000}, {"at_ns", 0}, {"rounds", 100}};
  std::ofstream(dir / "eziotrace-clock.json")
      << nlohmann::json{{"reference", "node1"}, {"host", host}, {"start", m}, {"end", m}}.dump();
}

// A call of an MPI region around one MPI record.
template <typename Record>
void call(ArchiveWriter& w, Ref region, uint64_t t0, uint64_t t1, Record record) {
  OTF2_EvtWriter* e = w.events(kThread);
  OTF2_EvtWriter_Enter(e, nullptr, t0, region);
  record(e);
  OTF2_EvtWriter_Leave(e, nullptr, t1, region);
}

}  // namespace

std::filesystem::path write_mpi_part(const std::filesystem::path& dir, const std::string& host,
                                     int rank, bool point_to_point, int64_t offset_ns,
                                     bool own_names) {
  std::filesystem::create_directories(dir);
  ArchiveWriter w(dir);
  Ref node = w.system_tree_node(host, "machine");
  w.system_tree_node_property(node, "EZIOTRACE::STATUS", std::string_view("complete"));
  Ref proc = w.location_group("app [100]", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location_group_property(proc, "EZIOTRACE::PID", 100);
  w.location(kThread, "app [200]", OTF2_LOCATION_TYPE_CPU_THREAD, proc);
  w.location_property(kThread, "EZIOTRACE::TID", 200);
  const uint64_t other = uint64_t(1 - rank) * kEztraceRankStride;
  Ref stand_in = w.location_group(converters::stand_in_group_name(other),
                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location(kStandIn, "EZTrace location " + std::to_string(other), OTF2_LOCATION_TYPE_CPU_THREAD,
             stand_in);

  std::vector<uint64_t> ranks = rank == 0 ? std::vector<uint64_t>{kThread, kStandIn}
                                          : std::vector<uint64_t>{kStandIn, kThread};
  w.group("MPI", OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, ranks);
  Ref all =
      w.group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, {0, 1});
  Ref alone = w.group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                      {uint64_t(rank)});
  Ref self = w.group("", OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, {});
  Ref world = w.comm("MPI_COMM_WORLD", all);
  uint64_t numbered = uint64_t(rank) * kEztraceRankStride;
  auto name = [&](const char* alike) {
    return own_names ? "MPI_COMM_" + std::to_string(++numbered) : std::string(alike);
  };
  Ref dup = OTF2_UNDEFINED_COMM, split = OTF2_UNDEFINED_COMM, dup2 = OTF2_UNDEFINED_COMM,
      of_dup = OTF2_UNDEFINED_COMM;
  if (own_names && rank == 1) split = w.comm(name("comm split"), alone, world);
  dup = w.comm(name("comm dup"), all, world);
  if (own_names) {
    dup2 = w.comm(name("comm dup 2"), all, world);
    of_dup = w.comm(name("comm of dup"), all, dup);
  }
  if (split == OTF2_UNDEFINED_COMM) split = w.comm(name("comm split"), alone, world);
  Ref comm_self = w.comm("MPI_Comm_Self", self);
  // EZTrace's POSIX handles name MPI_Comm_Self (docs/merge.md).
  Ref posix = w.io_paradigm("posix", "POSIX I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                            OTF2_IO_PARADIGM_FLAG_NONE);
  Ref handle = w.io_handle("/data/out", w.io_file("/data/out", node), posix,
                           OTF2_IO_HANDLE_FLAG_NONE, OTF2_UNDEFINED_IO_HANDLE, comm_self);

  Ref send = w.region("MPI_Send", "MPI_Send", "MPI", OTF2_REGION_ROLE_POINT2POINT);
  Ref recv = w.region("MPI_Recv", "MPI_Recv", "MPI", OTF2_REGION_ROLE_POINT2POINT);
  Ref barrier = w.region("MPI_Barrier", "MPI_Barrier", "MPI", OTF2_REGION_ROLE_BARRIER);
  Ref open = w.region("open", "open", "POSIX I/O", OTF2_REGION_ROLE_FILE_IO);
  call(w, open, 400, 500, [&](OTF2_EvtWriter* e) {
    OTF2_EvtWriter_IoCreateHandle(e, nullptr, 500, handle, OTF2_IO_ACCESS_MODE_WRITE_ONLY,
                                  OTF2_IO_CREATION_FLAG_CREATE, OTF2_IO_STATUS_FLAG_NONE);
  });
  if (point_to_point && rank == 0) {
    call(w, send, 1000, 1100,
         [&](OTF2_EvtWriter* e) { OTF2_EvtWriter_MpiSend(e, nullptr, 1010, 1, world, 7, 4); });
    call(w, recv, 3000, 3400,
         [&](OTF2_EvtWriter* e) { OTF2_EvtWriter_MpiRecv(e, nullptr, 3400, 1, dup, 8, 4); });
  } else if (point_to_point) {
    call(w, recv, 900, 1200,
         [&](OTF2_EvtWriter* e) { OTF2_EvtWriter_MpiRecv(e, nullptr, 1200, 0, world, 7, 4); });
    call(w, send, 2000, 2100,
         [&](OTF2_EvtWriter* e) { OTF2_EvtWriter_MpiSend(e, nullptr, 2010, 0, dup, 8, 4); });
  }
  auto barrier_on = [&](Ref comm, uint64_t t) {
    call(w, barrier, t, t + 100, [&](OTF2_EvtWriter* e) {
      OTF2_EvtWriter_MpiCollectiveBegin(e, nullptr, t);
      OTF2_EvtWriter_MpiCollectiveEnd(e, nullptr, t + 100, OTF2_COLLECTIVE_OP_BARRIER, comm,
                                      OTF2_UNDEFINED_UINT32, 0, 0);
    });
  };
  barrier_on(split, 5000);
  // Every communicator used, so that the rewrite defines it too.
  if (own_names) barrier_on(dup2, 6000), barrier_on(of_dup, 7000);
  otf2::Clock clock;
  clock.global_offset = 400;
  clock.trace_length = own_names ? 6700 : 4700;
  w.clock(clock);
  w.close();
  if (host != "node1") write_clock_file(dir, host, offset_ns);
  return dir;
}

}  // namespace ezio::test
