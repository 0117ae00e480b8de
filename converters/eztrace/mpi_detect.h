// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Which MPI an application uses, and the EZTrace modules that follow from it (docs/recording.md,
// "MPI programs").
#include <filesystem>
#include <string>
#include <vector>

namespace ezio::converters {

struct MpiUse {
  std::string mpi;            // "mpich", "openmpi"; "" when none was found
  std::string library;        // the MPI library's name as needed, e.g. "libmpi.so.40"
  std::filesystem::path via;  // the file that needs it (the program, a library, mpi4py's module)
};

// The MPI a program is linked against: the first MPI library of its ELF DT_NEEDED closure
// (libraries found as the dynamic loader finds them: LD_LIBRARY_PATH of env, DT_RPATH/DT_RUNPATH,
// /etc/ld.so.conf, the default directories). A Python interpreter: the MPI of mpi4py's extension
// module, found by that interpreter with env (mpi4py and h5py's MPI build use it).
MpiUse mpi_of_program(const std::filesystem::path& program, const std::vector<std::string>& env);

// The `-t` modules for `command` (run with env): when they name no MPI module and the application
// (after a launcher, or the command itself) uses an MPI, that MPI's EZTrace module and mpiio are
// added (said once on stderr); an MPI module that is not the application's MPI is an error
// raised before anything runs. MPI modules (mpich, openmpi, mpiio) asked for a program that uses
// no MPI (an ELF program run directly, not a shell, `env` or another program that starts others)
// are left out, said once on stderr; with no other module left, an error.
std::vector<std::string> modules_for(const std::vector<std::string>& modules,
                                     const std::vector<std::string>& command,
                                     const std::vector<std::string>& env);

}  // namespace ezio::converters
