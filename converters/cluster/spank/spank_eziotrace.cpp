// SPDX-License-Identifier: GPL-2.0-only
// The SPANK plugin of `srun --eziotrace=DIR ...` (docs/cluster.md, "srun --eziotrace"). In srun
// (the local context) it replaces srun, once its options are read, by `eziotrace record -o DIR --
// srun ...` without the option: the step is recorded exactly as that command records it (every
// task through its node's eziotraced, one merged archive, its exit status rules). salloc and
// sbatch refuse the option (it belongs on the srun line); slurmstepd and slurmd ignore it.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "converters/cluster/node_session.h"
#include "converters/cluster/spank/spank_command.h"

// Built with hidden symbols (converters/CMakeLists.txt): what Slurm looks up is declared visible.
#pragma GCC visibility push(default)
extern "C" {
#include <slurm/spank.h>

// SPANK_PLUGIN(eziotrace, 1), with the declarations C++ needs to give them C names and external
// linkage (a namespace-scope const is internal in C++).
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
}
#pragma GCC visibility pop
const char plugin_name[] = "eziotrace";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
const unsigned int spank_plugin_version = 1;

namespace {

using ezio::converters::SpankRequest;

// What srun's --eziotrace asked for (the last one given, as getopt hands them in order).
std::optional<SpankRequest> g_request;
std::string g_eziotrace;

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    words.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (words.empty())
    ezio::fail("--eziotrace: cannot read srun's command line (/proc/self/cmdline)");
  return words;
}

// Slurm put the option in srun's environment for the step's side (spank_init_post_opt), and a
// user may have set it there: either would hand it to the inner srun, which would record again.
void forget_option_variables() {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (ezio::converters::is_spank_option_variable(name)) names.emplace_back(name);
  }
  for (const std::string& n : names) unsetenv(n.c_str());
}

int option_given(int, const char* value, int remote) {
  const spank_context_t context = spank_context();
  if (context == S_CTX_ALLOCATOR) {
    slurm_error(
        "--eziotrace is an option of srun: put it on each srun line of the job (srun "
        "--eziotrace=DIR ...); salloc and sbatch do not record");
    return -1;
  }
  if (remote || context != S_CTX_LOCAL) return 0;
  try {
    g_request = ezio::converters::parse_spank_value(value ? value : "");
  } catch (const std::exception& e) {  // none may cross into Slurm's C
    slurm_error("%s", e.what());
    return -1;
  }
  return 0;
}

// has_arg 1: getopt_long takes the value after '=' or as the next word, so both
// `--eziotrace=DIR` and `--eziotrace DIR` work; a missing value is srun's own error.
char g_name[] = "eziotrace";  // ezio::converters::kSpankOption
char g_arginfo[] = "DIR[,run][,tools=MOD+MOD]";
char g_usage[] =
    "Record this step with eziotrace into the archive DIR (as `eziotrace record -o DIR -- srun "
    "...`); `run` adds EZTrace's layers, tools= chooses its modules.";
struct spank_option g_option = {g_name, g_arginfo, g_usage, 1, 0, option_given};

std::vector<std::string> plugin_args(int argc, char** argv) {
  return std::vector<std::string>(argv, argv + argc);
}

// Replaces srun by eziotrace; returns only when that failed.
int run_eziotrace(const SpankRequest& request) {
  if (const char* outer = std::getenv(ezio::converters::kSpankMarkerEnv)) {
    slurm_info("--eziotrace ignored: this srun runs inside the step eziotrace records into %s",
               outer);
    return 0;
  }
  if (std::getenv(ezio::converters::kSessionEnv)) {
    slurm_info("--eziotrace ignored: this srun runs inside a task eziotrace records");
    return 0;
  }
  std::vector<std::string> cmd;
  try {
    cmd = ezio::converters::spank_eziotrace_command(g_eziotrace, own_command_line(), request);
  } catch (const std::exception& e) {  // none may cross into Slurm's C
    slurm_error("%s", e.what());
    return -1;
  }
  forget_option_variables();
  setenv(ezio::converters::kSpankMarkerEnv, request.output.c_str(), 1);
  std::vector<char*> argv;
  for (std::string& w : cmd) argv.push_back(w.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  const int err = errno;
  unsetenv(ezio::converters::kSpankMarkerEnv);
  slurm_error("--eziotrace: cannot run %s: %s (plugstack.conf's eziotrace= argument)", argv[0],
              std::strerror(err));
  return -1;
}

}  // namespace

extern "C" {

// Registered here rather than through a spank_options table: only a registered option reaches
// salloc and sbatch, which must refuse it with a message rather than not know it.
int slurm_spank_init(spank_t sp, int argc, char** argv) {
  const spank_context_t context = spank_context();
  if (context != S_CTX_LOCAL && context != S_CTX_ALLOCATOR && context != S_CTX_REMOTE) return 0;
  try {
    g_eziotrace = ezio::converters::spank_eziotrace_path(plugin_args(argc, argv), EZIO_EZIOTRACE);
  } catch (const std::exception& e) {  // none may cross into Slurm's C
    slurm_error("%s", e.what());
    return -1;
  }
  const spank_err_t rc = spank_option_register(sp, &g_option);
  if (rc != ESPANK_SUCCESS) {
    slurm_error("spank_eziotrace.so: cannot register --eziotrace: %s", spank_strerror(rc));
    return -1;
  }
  return 0;
}

// srun has read all its options (and refused bad ones) but started nothing yet.
int slurm_spank_init_post_opt(spank_t, int, char**) {
  if (spank_context() != S_CTX_LOCAL || !g_request) return 0;
  return run_eziotrace(*g_request);
}

}  // extern "C"
