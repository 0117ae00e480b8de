// SPDX-License-Identifier: GPL-2.0-only
// Two-phase collective I/O on a real recording: tests/programs/mpiio/mpiio_calls.c under
// `eziotrace -t mpich,mpiio,posixio -- mpiexec.mpich -np 2` with ROMIO's collective buffering
// forced on one aggregator (ROMIO_HINTS: romio_cb_write/romio_cb_read enable, cb_nodes 1), read
// by `eziotrace collective` and `eziotrace layers` (docs/analysis.md): the other rank's bytes were
// moved by the aggregator's system call inside the aggregator's own collective call, and the
// stack nests (0 inversions).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using nlohmann::json;

namespace {

json rows_where(const json& table, const std::string& key, const json& value) {
  json out = json::array();
  for (const auto& row : table) {
    if (row.contains(key) && row[key] == value) out.push_back(row);
  }
  return out;
}

TEST(MpiioCollective, TheAggregatorMovesTheOtherRanksBytesInsideItsOwnCall) {
  ASSERT_TRUE(fs::exists(program("mpiio_calls_mpich")))
      << "mpiio_calls_mpich was not built: MPICH is missing (run scripts/setup.sh)";
  fs::path dir = ezio::test::scratch_dir("mpiio-collective");
  fs::path hints = dir / "hints", out = dir / "out";
  std::ofstream(hints) << "romio_cb_write enable\nromio_cb_read enable\ncb_nodes 1\n";
  ASSERT_EQ(setenv("ROMIO_HINTS", hints.c_str(), 1), 0);
  auto r =
      ezio::test::eziotrace({"-t", "mpich,mpiio,posixio", "-o", out.string(), "--", "mpiexec.mpich",
                             "-np", "2", program("mpiio_calls_mpich"), dir.string()});
  unsetenv("ROMIO_HINTS");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::string anchor = (out / "eziotrace.otf2").string();

  auto c = ezio::test::eziotrace({"collective", "--json", anchor});
  ASSERT_EQ(c.status, 0) << c.err;
  json j = json::parse(c.out);
  json ops = rows_where(j["collective"], "function", "MPI_File_write_at_all");
  ASSERT_EQ(ops.size(), 1u) << j["collective"].dump(1);
  EXPECT_EQ(ops[0]["ranks"], 2);
  EXPECT_EQ(ops[0]["asked_bytes"], 8192);  // 4096 per rank (mpiio_calls.c's kBlock)
  EXPECT_EQ(ops[0]["syscall_bytes"], 8192);
  uint64_t call = ops[0]["call"];
  // One rank made no data call inside its collective call; the other's moved both ranks' bytes.
  json parts = rows_where(j["collective_ranks"], "call", call);
  ASSERT_EQ(parts.size(), 2u);
  std::string aggregator, other;
  for (const auto& p : parts) {
    (p["syscall_calls"] == 0 ? other : aggregator) = p["rank"];
  }
  ASSERT_FALSE(aggregator.empty()) << parts.dump(1);
  ASSERT_FALSE(other.empty()) << parts.dump(1);
  EXPECT_EQ(ops[0]["aggregators"], aggregator);
  json movers = rows_where(j["collective_movers"], "call", call);
  ASSERT_EQ(movers.size(), 2u) << movers.dump(1);
  for (const auto& m : movers) {
    EXPECT_EQ(m["moved_by"], aggregator) << m.dump();
    EXPECT_EQ(m["bytes"], 4096);
    EXPECT_DOUBLE_EQ(m["share_percent"].get<double>(), 100.0);
  }

  auto l = ezio::test::eziotrace({"layers", "--json", anchor});
  ASSERT_EQ(l.status, 0) << l.err;
  json layers = json::parse(l.out);
  EXPECT_EQ(layers["containment"][0]["inversions"], 0);
  json mpi = rows_where(layers["layers"], "layer", "MPI-IO");
  ASSERT_EQ(mpi.size(), 1u);
  EXPECT_GT(mpi[0]["writes"].get<uint64_t>(), 0u);
  EXPECT_EQ(rows_where(layers["layers"], "layer", "HDF5")[0]["writes"], "not observed");
  EXPECT_FALSE(
      rows_where(rows_where(layers["nesting"], "layer", "Syscall"), "inside", "MPI-IO").empty());
}

}  // namespace
