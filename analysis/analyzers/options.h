// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Options shared by the analyzer subcommands, and the filters they understand (their command-line
// form: app/analysis_options.h).
#include <string>
#include <vector>

#include "analysis/analyzers/table.h"
#include "analysis/model/calls.h"

namespace ezio::analysis {

struct Filters {
  std::vector<std::string> threads;  // location id, TID, or part of the location name
  std::vector<std::string> layers;   // hdf5, mpiio, user, syscall, vfs, fs, pagecache, block
  std::vector<std::string> regions;  // part of the region (canonical) name

  bool location_selected(const Definitions& defs, OTF2_LocationRef loc) const;
  bool layer_selected(Layer l) const;
  bool region_selected(const RegionInfo& r) const;
  // Throws ezio::Error on an unknown layer name.
  void validate() const;
};

// Said under every analyzer's tables when infrastructure I/O was left out of them.
inline constexpr const char* kInfrastructureNote =
    "Infrastructure (the MPI launcher's processes; start-up and system files: loader, libraries, "
    "/proc, /sys, /etc; inherited descriptors) is left out of the tables above and counted apart; "
    "--all counts it with the application.";

struct CommonOptions {
  std::string trace;
  bool json = false;
  bool csv = false;
  Filters filters;
  // --all: the launcher's and start-up I/O counted with the application's (by default it is shown
  // apart, as "infrastructure": analysis/model/process_role.h).
  bool all = false;
  Format format() const { return json ? Format::kJson : csv ? Format::kCsv : Format::kText; }
};

}  // namespace ezio::analysis
