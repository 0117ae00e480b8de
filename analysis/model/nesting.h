// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The stack's containment, checked call by call: an HDF5 call contains the MPI-IO calls it made,
// which contain POSIX calls, which contain system calls, and so on down; never the other way
// round. Fed with one location's calls as CallSink delivers them (innermost first, each with its
// depth), it counts for each layer the calls whose nearest enclosing I/O call is of each layer,
// and the inversions (a call inside a call of a layer below it): 0 is the guarantee.
// Memory: the calls not yet claimed by an enclosing call, bounded by the nesting depth times the
// calls of one outermost call.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/calls.h"

namespace ezio::analysis {

class NestingCheck {
 public:
  // At each location's start: calls of another location never contain these.
  void begin_location() { open_.clear(); }
  // At each location's end: the I/O calls inside no I/O call count as outermost.
  void end_location();
  // A completed call; `io`: it is one of the stack's calls (counts_as_io), else it is transparent
  // (main, MPI_Barrier) and its I/O children belong to the I/O call around it.
  void add(const Call& c, bool io);

  // inside[outer][inner]: calls of layer `inner` directly inside a call of layer `outer`.
  std::array<std::array<uint64_t, kLayerCount>, kLayerCount> inside{};
  std::array<uint64_t, kLayerCount> outermost{};  // calls with no I/O call around them
  uint64_t inversions = 0;
  std::vector<std::string> inversion_details;  // the first few, for a person to read

 private:
  struct Open {
    uint32_t depth;
    Layer layer;
  };
  std::vector<Open> open_;  // completed I/O calls whose enclosing I/O call has not closed yet
};

}  // namespace ezio::analysis
