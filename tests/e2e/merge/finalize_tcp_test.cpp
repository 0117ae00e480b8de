// SPDX-License-Identifier: GPL-2.0-only
// A 2-rank MPICH job under `eziotrace -t mpich,posixio` with UCX over TCP between the ranks
// (UCX_TLS=tcp,self, as between two nodes) ends, several times in a row (root, BPF, EZTrace,
// MPICH). Without the preload helper's barrier before MPICH's MPI_Finalize
// (converters/eztrace/preload/mpi_finalize.c), MPICH 4.0's ch4:ucx finalization deadlocks after
// EZTrace's own finalization traffic: one rank waits in its PMI barrier while the other's UCX
// disconnect waits on it (docs/cluster.md, "EZTrace's layers across nodes"). It did every time on
// this machine; a hang is cut by `timeout` and fails the test with its status.
#include <gtest/gtest.h>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;

TEST(FinalizeTcp, EztraceMpichJobsOverTcpEnd) {
  ASSERT_TRUE(fs::exists(program("mpi_node_io"))) << "mpi_node_io was not built: no MPICH";
  const fs::path dir = ezio::test::scratch_dir("finalize-tcp");
  for (int i = 0; i < 3; ++i) {
    const fs::path out = dir / ("job" + std::to_string(i));
    auto r = ezio::test::run({"timeout",
                              "-s",
                              "KILL",
                              "120",
                              EZIO_BINARY,
                              "-t",
                              "mpich,posixio",
                              "-o",
                              out.string(),
                              "--",
                              "mpirun.mpich",
                              "-genv",
                              "UCX_TLS",
                              "tcp,self",
                              "-genv",
                              "MPI_NODE_IO_NO_FINAL_BARRIER",
                              "1",
                              "-wdir",
                              dir.string(),
                              "-np",
                              "2",
                              program("mpi_node_io"),
                              dir.string()});
    ASSERT_EQ(r.status, 0) << "run " << i << " (137: killed after 120 s, the ranks hung in "
                           << "MPI_Finalize)\n"
                           << r.out << r.err;
    EXPECT_TRUE(fs::exists(out / "eziotrace.otf2")) << "run " << i;
  }
}
