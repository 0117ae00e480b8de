// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace merge-hosts PART... -o OUT`: one OTF2 archive from the archives recorded on several
// hosts, each host's CLOCK_MONOTONIC mapped onto the reference host's timeline by its clock file
// (host_part.h). One system-tree node per host under the archive's root, each host's process
// groups and devices under it, its properties (kernel release, loss counters...) and its clock
// map on it. Parts are taken one after the other: memory holds every part's groups and
// communicators, one part's other definitions, and no events (assembled parts' events are not
// read at all; rewritten ones are streamed location by location). docs/cluster.md describes the
// archive.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "converters/hosts/host_part.h"

namespace ezio::converters {

struct HostsReport {
  std::vector<HostPart> parts;  // every part given, with its problem if it was not merged
  uint64_t hosts = 0;           // parts merged
  uint64_t events = 0;
  size_t assembled = 0;  // parts whose event files were taken as they are
  size_t rewritten = 0;  // parts whose events were read and rewritten
  std::string status;    // EZIOTRACE::HOSTS_STATUS: "complete" or "partial: ..."
  // Why the job was interrupted (the signal the submitting eziotrace received), or "": the
  // archive's EZIOTRACE::STATUS is then "interrupted", its STATUS_REASON this.
  std::string interrupted;
  bool partial() const { return status != "complete"; }
};

// Writes <out_dir>/eziotrace.otf2. Throws ezio::Error when no part can be merged. absent: parts
// known missing (their host and why), named in the archive's status as the unmergeable ones are.
// interrupted: HostsReport::interrupted. Each part is assembled (assemble_part.h: its event files
// linked as they are, its ids and clock mapped by OTF2's readers) unless it cannot be or
// rewrite_events asks for the full merge: its events then read and rewritten.
HostsReport merge_hosts(const std::vector<std::filesystem::path>& parts,
                        const std::filesystem::path& out_dir, std::vector<HostPart> absent = {},
                        const std::string& interrupted = "", bool rewrite_events = false);

struct MergeHostsOptions {
  std::vector<std::string> parts;
  std::string out;
  bool force = false;
  bool rewrite_events = false;
};
// The command: staged, published whole; its status is 4 when the archive is partial. Returns the
// archive's anchor.
std::filesystem::path merge_hosts_command(const MergeHostsOptions& o);

}  // namespace ezio::converters
