// SPDX-License-Identifier: GPL-2.0-only
#include "app/timeline_options.h"

namespace ezio::app {

void add_timeline_selection_options(CLI::App& cmd, converters::ExportOptions& o) {
  cmd.add_option("TRACE", o.trace, "the archive (eziotrace.otf2 or its directory)")->required();
  cmd.add_option("--window", o.window, "only T0:T1, in seconds from the start of the recording");
  cmd.add_option("--thread", o.tid, "only this thread (TID) and the block requests it caused");
  cmd.add_option("--layers", o.layers,
                 "only these layers: hdf5,mpiio,user,syscall,vfs,fs,pagecache,block");
  cmd.add_option("--max-events", o.max_events,
                 "refuse to convert more events than this (default 5000000; 0: no limit)");
}

}  // namespace ezio::app
