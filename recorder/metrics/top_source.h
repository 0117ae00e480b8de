// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where `eziotrace top` reads eziotraced's metrics: its HTTP endpoint (GET /metrics, as any user)
// or the textfile it writes for node_exporter.
#include <string>

namespace ezio::recorder::metrics {

struct TopSource {
  std::string endpoint = "127.0.0.1:9464";  // [ADDR:]PORT, as eziotraced --metrics takes it
  std::string textfile;                     // when set, read instead of the endpoint
};

struct Exposition {
  std::string text;
  double time_s = 0;  // when it was taken: now for the endpoint, the file's mtime for a textfile
};

// The metrics now. Fails (ezio::Error, with what to do) when no eziotraced answers at the
// endpoint or the textfile cannot be read.
Exposition fetch_exposition(const TopSource& source);

// "http://127.0.0.1:9464/metrics" or the textfile's path.
std::string describe(const TopSource& source);

}  // namespace ezio::recorder::metrics
