// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace clock serve|measure`: the offset between this host's CLOCK_MONOTONIC and another's,
// by ping-pong over TCP (recorder/core/clock_sync.h). The building block of multi-node recording's
// clock alignment (docs/cluster.md), usable alone to see what a network allows.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "recorder/core/clock_sync.h"

namespace ezio::app {

namespace {

struct ClockOptions {
  uint16_t port = 7471;
  unsigned connections = 1;
  unsigned rounds = 200;
  unsigned timeout_s = 30;
  std::string host;
};

}  // namespace

void add_clock_command(CLI::App& app) {
  auto opt = std::make_shared<ClockOptions>();
  CLI::App* cmd = app.add_subcommand(
      "clock", "measure the offset of another host's monotonic clock (ping-pong over TCP)");
  cmd->require_subcommand(1);
  CLI::App* serve = cmd->add_subcommand("serve", "answer ping-pongs on a TCP port");
  serve->add_option("-p,--port", opt->port, "TCP port")->capture_default_str();
  serve->add_option("-c,--connections", opt->connections, "clients to serve, then exit")
      ->capture_default_str();
  serve->callback([opt] { recorder::serve_clock(opt->port, opt->connections); });

  CLI::App* measure = cmd->add_subcommand(
      "measure", "the server's clock minus this host's, with its error bound, as JSON");
  measure->add_option("host", opt->host, "host running `eziotrace clock serve`")->required();
  measure->add_option("-p,--port", opt->port, "TCP port")->capture_default_str();
  measure->add_option("-n,--rounds", opt->rounds, "ping-pong rounds")->capture_default_str();
  measure->add_option("--connect-timeout", opt->timeout_s, "seconds to wait for the server")
      ->capture_default_str();
  measure->callback([opt] {
    const auto o = recorder::measure_clock(opt->host, opt->port, opt->rounds, opt->timeout_s);
    nlohmann::json j = {{"host", opt->host},          {"offset_ns", o.offset_ns},
                        {"error_ns", o.error_ns},     {"at_ns", o.at_ns},
                        {"rtt_min_ns", o.rtt_min_ns}, {"rtt_median_ns", o.rtt_median_ns},
                        {"rounds", o.rounds}};
    fmt::print("{}\n", j.dump());
  });
}

}  // namespace ezio::app
