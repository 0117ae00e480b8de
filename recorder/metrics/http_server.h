// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A minimal HTTP/1.x server for GET /metrics, in its own thread, with the textfile writer beside
// it. Hardened rather than general: one request per connection (closed after the answer), a
// request head of at most 8 KiB, a deadline per connection (a slow or silent client is cut off), a
// bound on connections at once (the others wait in the listen backlog); anything else is answered
// 400/404/405/431.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "common/unique_fd.h"
#include "recorder/metrics/exposition.h"

namespace ezio::recorder::metrics {

struct ServerConfig {
  std::string listen;    // "[ADDR:]PORT" (ADDR an IPv4 address, localhost when absent); "": no HTTP
  std::string textfile;  // node_exporter textfile to rewrite (atomically); "": none
  std::chrono::milliseconds textfile_period{15000};
  std::chrono::milliseconds client_deadline{5000};
  unsigned max_connections = 64;
};

// "[ADDR:]PORT" to an address and port; fails (ezio::Error, exit code 2) on anything else.
struct ListenAddress {
  std::string addr;
  uint16_t port = 0;
};
ListenAddress parse_listen(const std::string& spec);

class MetricsServer {
 public:
  using Scrape = std::function<std::string(Format)>;
  // Binds now (a port in use fails here, ezio::Error); serves from start() on.
  MetricsServer(const ServerConfig& config, Scrape scrape);
  ~MetricsServer();  // stops the thread
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // The port bound (the one asked, or the kernel's choice for port 0).
  uint16_t port() const { return port_; }
  // The thread starts (after a daemon's fork: threads do not survive it).
  void start();

 private:
  struct Loop;
  void run();
  ServerConfig config_;
  Scrape scrape_;
  UniqueFd listen_;
  UniqueFd stop_;
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace ezio::recorder::metrics
