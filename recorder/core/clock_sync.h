// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Offsets between two hosts' CLOCK_MONOTONIC, measured by ping-pong over TCP (docs/cluster.md,
// Clocks): the client sends its time t0, the server answers with its time t1, the client reads
// t2. The server's clock at the client's (t0 + t2) / 2 was t1, give or take (t2 - t0) / 2: of
// many rounds, the one with the shortest round trip bounds the error best. Two measurements, at
// the start and at the end of a job, give a linear map from the server's clock to the client's.
#include <cstdint>
#include <span>
#include <string>

#include "common/unique_fd.h"

namespace ezio::recorder {

struct ClockSample {
  int64_t t0 = 0;  // client, before sending (ns, CLOCK_MONOTONIC)
  int64_t t1 = 0;  // server, when it answered
  int64_t t2 = 0;  // client, after the answer arrived
};

// The server's clock minus the client's, at client time at_ns; the true offset is within
// offset_ns +- error_ns (half the shortest round trip, whatever the path's asymmetry).
struct ClockOffset {
  int64_t offset_ns = 0;
  int64_t error_ns = 0;
  int64_t at_ns = 0;
  int64_t rtt_min_ns = 0;
  int64_t rtt_median_ns = 0;
  unsigned rounds = 0;
};

// Fails on no samples, or on a sample whose t2 is before its t0.
ClockOffset estimate_offset(std::span<const ClockSample> samples);

// Server time of a client time, and back, from two offsets (start, end) by linear interpolation
// (drift); one offset alone, or two at the same time, is a constant shift. error_ns: the larger
// of the two measurements' errors (interpolation between them adds none beyond it).
struct ClockMap {
  ClockOffset start, end;
  int64_t server_time(int64_t client_ns) const;
  int64_t client_time(int64_t server_ns) const;
  double drift_ppm() const;
  int64_t error_ns() const;
};

// Answers ping-pong rounds on a TCP port (0.0.0.0), one client at a time, each until it closes.
class ClockServer {
 public:
  explicit ClockServer(uint16_t port);  // 0: a free port, chosen by the kernel
  uint16_t port() const { return port_; }
  // Serves `connections` clients (0: any number) or until stop(), from another thread.
  void serve(unsigned connections = 0);
  void stop();

 private:
  UniqueFd listen_, stop_;
  uint16_t port_ = 0;
};

// ClockServer(port).serve(connections).
void serve_clock(uint16_t port, unsigned connections);

// `rounds` ping-pongs with the server at host:port. Retries the connection for up to
// connect_timeout_s (the server may be starting on another node).
ClockOffset measure_clock(const std::string& host, uint16_t port, unsigned rounds,
                          unsigned connect_timeout_s = 30);

}  // namespace ezio::recorder
