// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Puts the lines of several time-ordered streams into one time-ordered output, in bounded
// memory: each stream (a location's lines) is appended to an unlinked temporary file as one
// segment, then the segments are merged by time with a small buffer each. A Pajé file must be in
// time order across containers; the archive is read one location at a time.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"

namespace ezio::converters {

class Spool {
 public:
  // The temporary file goes in `dir` (the output's directory: same disk, same space check).
  explicit Spool(const std::filesystem::path& dir);

  void begin_segment();
  // `time` must not decrease within a segment.
  void add(uint64_t time, std::string_view line);
  void end_segment();

  // Calls `out` with every line in time order; equal times keep segment order, and `first`
  // (already sorted, e.g. container creations) goes before the segments at equal times.
  void merge(const std::vector<std::pair<uint64_t, std::string>>& first,
             const std::function<void(std::string_view)>& out);

 private:
  void flush();
  struct Segment {
    uint64_t begin, end;
  };
  UniqueFd fd_;
  std::string buffer_;
  uint64_t written_ = 0;
  uint64_t segment_start_ = 0;
  std::vector<Segment> segments_;
};

}  // namespace ezio::converters
