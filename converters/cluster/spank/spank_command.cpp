// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/spank/spank_command.h"

#include <algorithm>

#include "common/error.h"
#include "converters/cluster/srun_line.h"

namespace ezio::converters {
namespace {

constexpr std::string_view kSyntax = "--eziotrace=DIR[,run][,tools=MOD+MOD...]";

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// EZTrace's module names are words (posixio, mpich, mpiio, hdf5...): anything else is a typo or
// a separator the user meant as ours.
bool is_module_name(std::string_view m) {
  return !m.empty() && std::all_of(m.begin(), m.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

void set_output(SpankRequest& r, std::string_view dir) {
  if (dir.empty()) fail("--eziotrace: the archive's directory is empty ({})", kSyntax);
  if (!r.output.empty())
    fail("--eziotrace: two directories ('{}' and '{}'); give one ({})", r.output, dir, kSyntax);
  r.output = dir;
}

void set_tools(SpankRequest& r, std::string_view list) {
  for (std::string_view m : split(list, '+')) {
    if (!is_module_name(m))
      fail("--eziotrace: tools={}: EZTrace's modules are words joined by '+' (tools=mpich+posixio)",
           list);
    r.tools.emplace_back(m);
  }
}

}  // namespace

SpankRequest parse_spank_value(std::string_view value) {
  if (value.empty()) fail("--eziotrace needs the archive's directory: {}", kSyntax);
  if (value.front() == '-')
    fail(
        "--eziotrace {}: the word after --eziotrace is its value, not an srun option; write "
        "{}",
        value, kSyntax);
  SpankRequest r;
  bool said_record = false;
  for (std::string_view item : split(value, ',')) {
    if (item == "record") {
      said_record = true;
    } else if (item == "run") {
      r.run_mode = true;
    } else if (item.starts_with("out=")) {
      set_output(r, item.substr(4));
    } else if (item.starts_with("tools=")) {
      set_tools(r, item.substr(6));
      r.run_mode = true;
    } else if (item.find('=') != std::string_view::npos) {
      fail("--eziotrace: unknown item '{}' (DIR, out=DIR, record, run, tools=MOD+MOD)", item);
    } else {
      set_output(r, item);
    }
  }
  if (r.output.empty()) fail("--eziotrace={}: no archive directory ({})", value, kSyntax);
  if (said_record && r.run_mode)
    fail("--eziotrace={}: `record` is the kernel layers only; `run` and tools= add EZTrace's",
         value);
  return r;
}

bool is_spank_option_word(std::string_view word) {
  if (!word.starts_with("--ez")) return false;
  const std::string_view name = word.substr(2, word.find('=') - 2);
  return std::string_view(kSpankOption).starts_with(name);
}

std::vector<std::string> srun_without_spank_option(const std::vector<std::string>& srun_argv) {
  if (srun_argv.empty()) return {};
  // Its value is required (has_arg 1): the next word unless written --eziotrace=DIR.
  auto words = [](const std::string& w) -> size_t {
    if (!is_spank_option_word(w)) return srun_option_words(w);
    return w.find('=') == std::string::npos ? 2 : 1;
  };
  std::vector<std::string> kept = {srun_argv.front()};
  const size_t program = walk_srun_options(srun_argv, words, [&](size_t first, size_t n) {
    if (is_spank_option_word(srun_argv[first])) return;
    kept.insert(kept.end(), srun_argv.begin() + long(first), srun_argv.begin() + long(first + n));
  });
  kept.insert(kept.end(), srun_argv.begin() + long(program), srun_argv.end());
  return kept;
}

std::vector<std::string> spank_eziotrace_command(const std::string& eziotrace,
                                                 const std::vector<std::string>& srun_argv,
                                                 const SpankRequest& request) {
  std::vector<std::string> cmd = {eziotrace, request.run_mode ? "run" : "record"};
  if (!request.tools.empty()) {
    std::string list;
    for (const std::string& m : request.tools) list += (list.empty() ? "" : ",") + m;
    cmd.insert(cmd.end(), {"-t", list});
  }
  cmd.insert(cmd.end(), {"-o", request.output, "--"});
  const std::vector<std::string> srun = srun_without_spank_option(srun_argv);
  cmd.insert(cmd.end(), srun.begin(), srun.end());
  return cmd;
}

bool is_spank_option_variable(std::string_view name) {
  const std::string own = std::string("_SLURM_SPANK_OPTION_") + kSpankOption + "_" + kSpankOption;
  for (std::string_view prefix : {"", "SLURM_SPANK_", "SPANK_"})
    if (name.starts_with(prefix) && name.substr(prefix.size()) == own) return true;
  return false;
}

std::string spank_eziotrace_path(const std::vector<std::string>& plugin_args,
                                 const std::string& installed) {
  std::string path = installed;
  for (const std::string& a : plugin_args) {
    if (!a.starts_with("eziotrace="))
      fail("spank_eziotrace.so: unknown argument '{}' in plugstack.conf (eziotrace=/path)", a);
    path = a.substr(10);
    if (!path.starts_with('/'))
      fail("spank_eziotrace.so: eziotrace={}: give eziotrace's absolute path", path);
  }
  return path;
}

}  // namespace ezio::converters
