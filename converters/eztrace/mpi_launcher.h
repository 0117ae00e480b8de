// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// MPI launchers on a command line: which MPI they belong to, and which program they run.
#include <filesystem>
#include <string>
#include <vector>

namespace ezio::converters {

// "mpich" when `word` runs MPICH's launcher (mpiexec.hydra, also as mpirun.mpich, mpiexec...),
// "openmpi" for Open MPI's (orterun, also as mpirun.openmpi...), "" otherwise. Found as execvp
// would find it, with env's PATH, symlinks (Debian's alternatives) followed.
std::string launcher_mpi(const std::string& word, const std::vector<std::string>& env);

// The program the command's processes run: for a launcher, the first word after its options
// that names an executable file (the values of its usual options skipped); else the command's
// own program. Empty when none is found.
std::filesystem::path application_of(const std::vector<std::string>& command,
                                     const std::vector<std::string>& env);

}  // namespace ezio::converters
