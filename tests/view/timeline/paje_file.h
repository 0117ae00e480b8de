// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A Pajé file as the tests read it: calls per row, block requests per lane, links by key.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ezio::test {

struct PajeLinkEnd {
  uint64_t ns = 0;  // time from the start of the trace
  std::string container;
};

struct PajeFile {
  std::map<std::string, long> calls;  // PushState of ST_Call per row container (t<tid>_<layer>)
  long requests = 0;                  // requests queued (q_* values)
  std::map<std::string, PajeLinkEnd> link_starts, link_ends;  // by key
  std::vector<std::string> errors;  // lanes overlapping, pops without push, time going back
  std::map<std::string, std::vector<uint8_t>>
      colours;  // entity value alias -> r, g, b as ViTE reads it
};

PajeFile read_paje(const std::filesystem::path& path);

}  // namespace ezio::test
