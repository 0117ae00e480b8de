// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace [options] [--] command [args...]` (`eziotrace run`; its command line: app/run.cpp):
// the command runs under EZTrace while the kernel layers are recorded; both end up merged in one
// archive.
#include <string>
#include <vector>

#include "recorder/session/record.h"

namespace ezio::converters {

struct RunCommandOptions {
  recorder::RecordOptions record;  // where the merged archive goes, and the recording's
  std::vector<std::string> modules{"posixio"};  // EZTrace's, as `eztrace -t` takes them
  bool keep_parts = false;  // also keep EZTrace's archive and the kernel archive
  // HOST[:PORT]: this host's clock offset to HOST's kept in the archive, as `record --clock-ref`
  // does (a task of `eziotrace -- srun ...`, converters/cluster/node_session.h). Empty: none.
  std::string clock_ref;
};

// Records, merges into o.record.output (staged, published whole) and sets the command's status: the
// application's when it failed, else 3 on alignment violations.
void run_command(const RunCommandOptions& o);

}  // namespace ezio::converters
