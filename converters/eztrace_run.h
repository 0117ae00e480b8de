#pragma once
// Running a command under EZTrace for `eziotrace [options] -- cmd`, and merging afterwards.
//
//   auto setup = ezio::converters::prepare_eztrace({"posixio"}, work_dir);
//   // start the command with setup.env added to its environment, record the kernel layers
//   auto summary = ezio::converters::finish_eztrace(setup, kernel_anchor, out_dir);
#include <filesystem>
#include <string>
#include <vector>

#include "common/output_dir.h"
#include "common/schema/files.h"
#include "converters/merge.h"

namespace ezio::converters {

struct EztraceSetup {
  std::vector<std::string> env;       // "NAME=value" entries to add to the command's environment
  std::filesystem::path trace_dir;    // EZTRACE_TRACE_DIR: EZTrace writes <prog>_trace here
  std::filesystem::path sidecar_dir;  // EZIOTRACE_SIDECAR_DIR: the helper's alignment files
  std::vector<std::string> modules;   // as loaded, e.g. {"posixio"}
};

// Builds the environment the `eztrace -t` launcher would (LD_PRELOAD of libeztrace-lib.so and
// libeztrace-<module>.so, EZTRACE_TRACE) plus the preload helper, with EZTrace's output and the
// alignment files in work_dir (created; should be private and empty). modules: names as
// `eztrace -t` takes them, each entry may hold several separated by ',' or ' '.
// Throws ezio::Error with a clear message when EZTrace or a module is not installed.
EztraceSetup prepare_eztrace(const std::vector<std::string>& modules,
                             const std::filesystem::path& work_dir);

struct MergeSummary {
  MergeReport report;
  std::filesystem::path anchor;  // <out_dir>/eziotrace.otf2
};

// After the command ended: finds every EZTrace archive and alignment file of the run, merges them
// with the kernel archive into out_dir, logs the report (loudly on alignment violations).
MergeSummary finish_eztrace(const EztraceSetup& setup, const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir);

// `eziotrace merge`: eztrace = eztrace_log.otf2, its <prog>_trace directory, or a directory of
// <prog>_trace directories; kernel = eziotrace.otf2 or its directory; sidecar_dir empty = the
// kernel archive's eziotrace-alignment (eziotrace record), else <EZTrace directory>/
// eziotrace-alignment.
MergeSummary merge_recorded(const std::filesystem::path& eztrace,
                            const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            const std::filesystem::path& sidecar_dir);

// Where the preload helper library is: next to the running executable.
std::filesystem::path preload_helper_path();

// The command line that runs `command` under EZTrace as set up: setup.env is added to env, except
// when the command is MPICH's launcher (mpiexec.hydra, also as mpirun): then the settings reach
// the ranks only, through -genv, because EZTrace's MPI module preloaded into the launcher and its
// proxies (which never call MPI_Init) makes them abort at exit.
std::vector<std::string> eztrace_command(const EztraceSetup& setup,
                                         const std::vector<std::string>& command,
                                         std::vector<std::string>& env);

// `eziotrace record` of a command that runs EZTrace itself (`eztrace -t ...`, or EZTrace's
// libraries in LD_PRELOAD): true when the command line or env says so.
bool runs_eztrace(const std::vector<std::string>& command, const std::vector<std::string>& env);

// Lets `eziotrace record` keep the helper's alignment data with the kernel archive, so that
// `eziotrace merge` needs nothing else. The files are written to <out>.alignment during the run
// (a working directory of eziotrace's, common/output_dir.h) and moved into the archive directory
// by store_into(); the directory is removed when that never happens.
class AlignmentCapture {
 public:
  // Creates the directory (what is in the way is refused; with force, a leftover of eziotrace's is
  // removed) and adds the helper (LD_PRELOAD, after what is there) and EZIOTRACE_SIDECAR_DIR to
  // env.
  AlignmentCapture(const std::filesystem::path& out, std::vector<std::string>& env, bool force);
  const std::filesystem::path& dir() const { return dir_.dir(); }
  // Moves the alignment files to <archive_dir>/eziotrace-alignment; returns how many there are.
  size_t store_into(const std::filesystem::path& archive_dir);

 private:
  OwnedDir dir_;
};

// The alignment directory inside a kernel archive directory.
inline constexpr const char* kAlignmentDirName = schema::kAlignmentDir;

}  // namespace ezio::converters
