// SPDX-License-Identifier: GPL-2.0-only
#include "app/analysis_options.h"

namespace ezio::app {

void add_common_options(CLI::App& cmd, analysis::CommonOptions& o) {
  // Existence is checked by the reader so that every bad path gets the same kind of message.
  cmd.add_option("TRACE", o.trace, "OTF2 archive: the .otf2 anchor file or its directory")
      ->required();
  auto* json = cmd.add_flag("--json", o.json, "machine-readable JSON on stdout");
  auto* csv = cmd.add_flag("--csv", o.csv, "CSV on stdout");
  json->excludes(csv);
  cmd.add_flag("--all", o.all,
               "count the MPI launcher's and start-up I/O with the application's (default: apart, "
               "as infrastructure)");
}

void add_filter_options(CLI::App& cmd, analysis::Filters& f, bool with_region) {
  cmd.add_option("--thread", f.threads,
                 "only this thread: location id, TID, or part of the location name (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option(
         "--layer", f.layers,
         "only this layer: hdf5, mpiio, user, syscall, vfs, fs, pagecache, block (repeatable)")
      ->allow_extra_args(false);
  if (with_region) {
    cmd.add_option("--region", f.regions, "only regions whose name contains this text (repeatable)")
        ->allow_extra_args(false);
  }
}

}  // namespace ezio::app
