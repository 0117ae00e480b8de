// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The properties of a multi-host archive (docs/cluster.md): on each host's system-tree node, the
// part's own (kernel release, loss counters, status...) and its clock map; on the root, what holds
// for the whole job (losses summed, the parts' statuses), which the analyzers read.
#include <map>
#include <set>
#include <string>

#include "common/otf2/definitions.h"
#include "common/otf2/writer.h"
#include "converters/hosts/host_part.h"

namespace ezio::converters {

struct HostsReport;

// What the root sums up from the hosts.
struct HostTotals {
  std::map<std::string, uint64_t> lost;  // EZIOTRACE::LOST::<layer>, summed
  std::set<std::string> kernels;
  std::string status;  // the first host's EZIOTRACE::STATUS other than "complete"
};

// Why a part's recording is not whole, from its system tree node's EZIOTRACE::STATUS and
// STATUS_REASON: "" when it is (complete, the application crashed, a snapshot: each is whole).
std::string incomplete_recording(const otf2::Definitions& d);

void write_host_properties(otf2::ArchiveWriter& w, otf2::Ref node, const HostPart& p,
                           const otf2::Definitions& d, HostTotals& totals);
void write_root_properties(otf2::ArchiveWriter& w, otf2::Ref root, const HostsReport& report,
                           const HostTotals& totals);

}  // namespace ezio::converters
