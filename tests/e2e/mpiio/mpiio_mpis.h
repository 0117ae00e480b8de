// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The two MPIs the mpiio module's tests run under: the same programs, built for each
// (tests/programs/mpiio), under each MPI's own launcher.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "run.h"

namespace ezio::test {

struct Mpi {
  std::string name;                        // EZTrace's module: "mpich", "openmpi"
  std::vector<std::string> launcher;       // up to the program: {"mpiexec.mpich", "-np", "2"}
  bool large_count = false;                // the MPI has MPI 4's `_c` forms
  std::string posix_write, syscall_write;  // what its independent MPI-IO writes call
  std::string label = name;                // the test's name for it

  // The program built for this MPI, under its launcher with 2 ranks.
  std::vector<std::string> command(const std::string& prog,
                                   const std::vector<std::string>& args) const {
    std::vector<std::string> c = launcher;
    c.push_back(program(prog + "_" + name));
    c.insert(c.end(), args.begin(), args.end());
    return c;
  }
};

// As root, Open MPI's launcher wants --allow-run-as-root.
inline std::vector<Mpi> mpis() {
  return {{"mpich", {"mpiexec.mpich", "-np", "2"}, true, "pwrite", "syscall:pwrite64"},
          {"openmpi",
           {"mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "2"},
           false,
           "pwrite",
           "syscall:pwrite64"}};
}

// gtest names a failing parameter by it.
inline void PrintTo(const Mpi& mpi, std::ostream* os) { *os << mpi.label; }

// And Open MPI with ROMIO instead of its default OMPIO.
inline std::vector<Mpi> mpiio_implementations() {
  std::vector<Mpi> out = mpis();
  Mpi romio = out.back();
  romio.launcher.insert(romio.launcher.begin() + 1, {"--mca", "io", "romio321"});
  romio.label = "openmpi_romio";
  out.push_back(romio);
  return out;
}

inline std::string mpi_name(const testing::TestParamInfo<Mpi>& info) { return info.param.label; }

}  // namespace ezio::test
