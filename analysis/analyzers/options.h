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

struct CommonOptions {
  std::string trace;
  bool json = false;
  bool csv = false;
  Filters filters;
  Format format() const { return json ? Format::kJson : csv ? Format::kCsv : Format::kText; }
};

}  // namespace ezio::analysis
