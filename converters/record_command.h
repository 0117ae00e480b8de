// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace record [options] [--] command [args...]` (its command line: app/record.cpp): the
// kernel layers only, no EZTrace; the alignment data of the processes that run EZTrace themselves
// kept in the archive, for `eziotrace merge`.
#include "recorder/session/record.h"

namespace ezio::converters {

struct RecordCommandOptions {
  recorder::RecordOptions record;
  // Keep the EZTrace alignment data in the archive (eziotrace merge needs it): done anyway when
  // the command runs EZTrace (runs_eztrace, converters/eztrace/environment.h). `run` has no such
  // option: it merges right away.
  bool eztrace_alignment = false;
  // --clock-ref HOST[:PORT]: this host's clock offset to HOST's, at the start and at the end,
  // kept beside the archive (converters/clock_reference.h). Empty: none.
  std::string clock_ref;
};

// Records into o.record.output (staged, published whole), prints the summary and sets the
// command's status to the application's.
void record_command(const RecordCommandOptions& o);

}  // namespace ezio::converters
