// SPDX-License-Identifier: GPL-2.0-only
#include "paje_file.h"

#include <fstream>
#include <sstream>

namespace ezio::test {
namespace {

// "12.000345678" -> nanoseconds, exactly (the exporter writes 9 decimals).
uint64_t ns_of(const std::string& t) {
  size_t dot = t.find('.');
  uint64_t s = std::stoull(t.substr(0, dot));
  std::string frac = dot == std::string::npos ? "" : t.substr(dot + 1);
  frac.resize(9, '0');
  return s * 1'000'000'000ULL + std::stoull(frac);
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string f;
  while (in >> std::ws && !in.eof()) {
    if (in.peek() == '"') {
      in.get();
      std::getline(in, f, '"');
    } else {
      in >> f;
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace

PajeFile read_paje(const std::filesystem::path& path) {
  PajeFile p;
  std::ifstream in(path);
  std::string line;
  std::map<std::string, int> lane_depth;
  uint64_t last = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    auto f = fields(line);
    const std::string& code = f[0];
    if (code == "5" && f.size() >= 5) {
      std::istringstream c(f[4]);
      double r, g, b;
      c >> r >> g >> b;
      p.colours[f[1]] = {uint8_t(r * 256), uint8_t(g * 256), uint8_t(b * 256)};
      continue;
    }
    if (code == "0" || code == "1" || code == "2" || code == "3" || code == "4") continue;
    uint64_t t = ns_of(f[1]);
    if (t < last) p.errors.push_back("time goes back: " + line);
    last = t;
    if (code == "9" && f[2] == "ST_Call") ++p.calls[f[3]];
    if (f[2] == "ST_Request" && (code == "9" || code == "10")) {
      int& depth = lane_depth[f[3]];
      depth += code == "9" ? 1 : -1;
      if (depth > 1) p.errors.push_back("two requests at once on " + f[3] + ": " + line);
      if (depth < 0) p.errors.push_back("pop without push on " + f[3]);
      if (code == "9" && f[4].starts_with("q_")) ++p.requests;
    }
    if (code == "16") p.link_starts[f[6]] = {t, f[4]};
    if (code == "17") p.link_ends[f[6]] = {t, f[4]};
  }
  return p;
}

}  // namespace ezio::test
