// SPDX-License-Identifier: GPL-2.0-only
#include "app/options.h"

#include <spdlog/spdlog.h>

namespace ezio::app {
namespace {

// --wait-children[=SECONDS]: an option whose value is optional, not a flag (CLI11 makes a numeric
// flag's "=0" -1).
void add_wait_children_option(CLI::App& cmd, recorder::RecordOptions& o) {
  cmd.add_option("--wait-children", o.wait_children_s,
                 "after the command ends, go on recording its descendants that still run until "
                 "they end, for at most SECONDS (--wait-children=SECONDS; default 5, 0: not at "
                 "all)")
      ->expected(0, 1)
      ->default_str("5")
      ->check(CLI::Range(0.0, 1e6));
}

// --service[=SOCKET] and --no-service (docs/service.md).
void add_service_options(CLI::App& cmd, recorder::RecordOptions& o) {
  using Path = recorder::RecordOptions::KernelPath;
  cmd.add_option_function<std::string>(
         "--service",
         [&o](const std::string& socket) {
           o.kernel_path = Path::kService;
           o.service_socket = socket == "default" ? "" : socket;
         },
         "record through the eziotraced service (--service=SOCKET for another socket than "
         "/run/eziotrace/eziotraced.sock); the default when that socket exists")
      ->expected(0, 1)
      ->default_str("default");
  cmd.add_flag_callback(
      "--no-service", [&o] { o.kernel_path = Path::kInProcess; },
      "load the BPF programs in this process even when eziotraced runs (root)");
}

}  // namespace

void add_record_options(CLI::App& cmd, RecordArgs& args) {
  recorder::RecordOptions& o = args.record;
  cmd.add_option("-o,--output", o.output, "archive directory (default: ./<prog>_eziotrace)");
  cmd.add_flag("-f,--force", o.force, "replace an existing archive");
  cmd.add_option("--ring-buffer", o.ring_buffer_mib, "ring buffer size in MiB (power of two)")
      ->check(CLI::Range(1, 4096));
  cmd.add_flag("!--no-probe-cache", o.probe_cache,
               "probe the kernel's hooks again instead of using what an earlier recording found "
               "(kept in /run/eziotrace until reboot)");
  cmd.add_option("--layers", o.layers,
                 "layers to record, comma-separated: syscall,vfs,fs,pagecache,block (default: "
                 "all; syscall is always recorded, the others nest in it)");
  add_wait_children_option(cmd, o);
  add_service_options(cmd, o);
  cmd.add_flag("-v,--verbose", args.verbose, "show libbpf and debug messages");
  cmd.footer("Everything after the options (or after --) is the command and its arguments.");
}

void apply_common(const RecordArgs& o) {
  if (o.verbose) spdlog::set_level(spdlog::level::debug);
}

std::vector<std::string> task_options(const RecordArgs& args) {
  const recorder::RecordOptions& o = args.record;
  std::vector<std::string> out = {"--ring-buffer", std::to_string(o.ring_buffer_mib), "--layers",
                                  o.layers, fmt::format("--wait-children={}", o.wait_children_s)};
  if (!o.probe_cache) out.push_back("--no-probe-cache");
  using Path = recorder::RecordOptions::KernelPath;
  if (o.kernel_path == Path::kInProcess) out.push_back("--no-service");
  if (o.kernel_path == Path::kService) {
    out.push_back(o.service_socket.empty() ? "--service" : "--service=" + o.service_socket);
  }
  if (args.verbose) out.push_back("-v");
  return out;
}

std::set<std::string> value_options(const CLI::App& cmd) {
  std::set<std::string> out;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->get_positional() || opt->get_expected_min() < 1) continue;
    for (const auto& s : opt->get_snames()) out.insert("-" + s);
    for (const auto& l : opt->get_lnames()) out.insert("--" + l);
  }
  return out;
}

}  // namespace ezio::app
