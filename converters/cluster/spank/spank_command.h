// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `srun --eziotrace=VALUE ...` (the SPANK plugin, spank_eziotrace.cpp; docs/cluster.md, "srun
// --eziotrace"): srun's own command line becomes `eziotrace record|run ... -o DIR -- srun ...`
// without the option, which records the step as that command does. These are the plugin's
// decisions without Slurm: what the option's value asks for, the command that replaces srun, and
// the variables through which Slurm would hand the option to the inner srun again.
#include <string>
#include <string_view>
#include <vector>

namespace ezio::converters {

// The option srun shows (--eziotrace) and the plugin's name in plugstack.conf's eyes.
inline constexpr char kSpankOption[] = "eziotrace";
// Set for the eziotrace that replaces srun (and so for its srun and the step's tasks): an srun
// that finds it set ignores --eziotrace instead of recording a recording.
inline constexpr char kSpankMarkerEnv[] = "EZIOTRACE_SPANK_STEP";

// What --eziotrace=VALUE asks for.
struct SpankRequest {
  std::string output;              // the merged archive's directory (eziotrace's -o)
  bool run_mode = false;           // `eziotrace run` (EZTrace's layers too), else `record`
  std::vector<std::string> tools;  // run's -t modules; empty: chosen as on one node
};

// VALUE is a comma-separated list: DIR (or out=DIR, for a directory named `run` or `record`),
// `record` (the default: the kernel layers) or `run`, tools=MOD+MOD (EZTrace's modules, implies
// run). Fails with the message srun prints on an empty or missing DIR, a value that looks like an
// srun option (`--eziotrace -N 2` took -N as its value), an unknown item, or conflicting items.
SpankRequest parse_spank_value(std::string_view value);

// Whether `word` is srun's long option --eziotrace, as getopt_long accepts it (--eziotrace,
// --eziotrace=DIR, or a prefix of it from --ez on: no option of srun's own starts so).
bool is_spank_option_word(std::string_view word);

// srun's command line (argv[0] first) without its --eziotrace options: srun's own options are
// scanned as srun reads them (srun_line.h), up to its program or `--`; --eziotrace takes its value
// after '=' or as the next word. The program's own arguments are left alone.
std::vector<std::string> srun_without_spank_option(const std::vector<std::string>& srun_argv);

// The command that replaces srun: eziotrace record|run [-t MODS] -o DIR -- srun [the rest].
std::vector<std::string> spank_eziotrace_command(const std::string& eziotrace,
                                                 const std::vector<std::string>& srun_argv,
                                                 const SpankRequest& request);

// Whether the environment variable `name` hands --eziotrace to a Slurm command: the variable
// srun, salloc and sbatch set for the step's side (_SLURM_SPANK_OPTION_<plugin>_<option>), the
// form a user may set instead of the option (SLURM_SPANK_ before it), and the prolog's (SPANK_).
bool is_spank_option_variable(std::string_view name);

// eziotrace's path from the plugin's arguments in plugstack.conf (`eziotrace=/path`), else
// `installed`. Fails on an unknown argument or a path that is not absolute.
std::string spank_eziotrace_path(const std::vector<std::string>& plugin_args,
                                 const std::string& installed);

}  // namespace ezio::converters
