// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace -- srun [srun options] program [args...]`: where srun's options end and the program
// each task runs begins, so that eziotrace can run every task under its own recording
// (docs/cluster.md, "How the remote ranks get recorded").
#include <functional>
#include <string>
#include <vector>

namespace ezio::converters {

// Whether command runs Slurm's srun (its first word's file name is `srun`).
bool is_srun(const std::vector<std::string>& command);

struct SrunLine {
  std::vector<std::string> launcher;  // srun and its options
  std::vector<std::string> program;   // what every task runs
};

// Splits an srun command line as srun's getopt does (options first, "--" ends them): the options
// of Slurm 22.05 that take a value (srun(1)) consume the next word unless written -Xvalue or
// --opt=value. Fails clearly on what one recording per task cannot follow: no program,
// --multi-prog (the program is a configuration file), a heterogeneous step (" : ").
SrunLine split_srun(const std::vector<std::string>& command);

// How many words srun's option `word` occupies (1, or 2 when its value is the next word), as
// split_srun counts them. Fails on --multi-prog, as split_srun does.
size_t srun_option_words(const std::string& word);

// Walks srun's options as split_srun does, from the command's second word: calls option(i, n) for
// each, n being words(command[i]) (srun_option_words, or one that also knows a plugin's options),
// a "--" passed as an option of one word; returns the index of the program's first word.
size_t walk_srun_options(const std::vector<std::string>& command,
                         const std::function<size_t(const std::string&)>& words,
                         const std::function<void(size_t, size_t)>& option);

}  // namespace ezio::converters
