// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// An archive's definitions as the analyzers use them: names resolved, kernel regions under their
// canonical "<layer>:<name>" (docs/trace-model.md), eziotrace's properties picked out. Dangling
// references, which EZTrace writes, resolve to placeholders rather than failing.
#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/otf2/definitions.h"

namespace ezio::analysis {

using otf2::Ref;

struct RegionDef {
  std::string name;       // display name (e.g. "write")
  std::string canonical;  // "<layer>:<name>" for kernel regions, see docs/trace-model.md
  OTF2_RegionRole role = OTF2_REGION_ROLE_UNKNOWN;
};

struct LocationDef {
  std::string name;
  Ref group = OTF2_UNDEFINED_LOCATION_GROUP;
};

struct IoHandleDef {
  std::string name;
  Ref file = OTF2_UNDEFINED_IO_FILE;
};

struct Definitions {
  uint64_t resolution = 1'000'000'000;  // ticks per second, never 0
  uint64_t global_offset = 0;
  uint64_t trace_length = 0;
  uint64_t realtime = 0;  // CLOCK_REALTIME ns at global_offset; 0 when the archive has none
  std::string host;       // name of the first system tree node ("" if none)

  std::map<Ref, RegionDef> regions;
  std::map<Ref, std::string> location_groups;  // name
  // Location group -> the name of its system-tree node: its host (docs/cluster.md).
  std::map<Ref, std::string> group_hosts;
  std::map<OTF2_LocationRef, LocationDef> locations;
  std::map<Ref, std::string> io_files;      // path
  std::map<Ref, std::string> io_paradigms;  // identification ("MPI-IO", "HDF5", "POSIX I/O"...)
  std::map<Ref, IoHandleDef> io_handles;
  std::map<Ref, std::string> attributes;           // name
  std::map<Ref, std::string> metric_members;       // name (e.g. "pagecache.hits")
  std::map<Ref, std::vector<Ref>> metric_classes;  // members, in the order of Metric values
  // SystemTreeNode properties (EZIOTRACE::LOST::<layer>, EZIOTRACE::STATUS...) of the root node
  // (an archive of several hosts has one node per host below it, docs/cluster.md).
  std::map<std::string, uint64_t> node_uint_properties;
  std::map<std::string, std::string> node_string_properties;
  // Each host's own node properties in an archive of several hosts, as text (integers in
  // decimal): host name -> property -> value.
  std::map<std::string, std::map<std::string, std::string>> host_properties;
  std::map<OTF2_LocationRef, uint64_t> location_tids;  // EZIOTRACE::TID
  std::map<Ref, uint64_t> group_pids, group_ppids;     // EZIOTRACE::PID, ::PPID of processes

  const RegionDef* region(Ref id) const;
  const LocationDef* location(OTF2_LocationRef id) const;
  // The path of the file behind a handle: its IoFile if defined, else the handle's name without
  // eziotrace's " [pid P fd F]" suffix, else "<handle N>".
  std::string handle_path(Ref handle) const;
  // A block device's location ("block <device>", docs/trace-model.md): its requests are device
  // time, not any thread's.
  bool is_device(OTF2_LocationRef loc) const;
  // Name of the process group a location belongs to ("" if unknown).
  std::string process_of(OTF2_LocationRef loc) const;
  // Name of the host (system-tree node) a location belongs to ("" if unknown).
  std::string host_of(OTF2_LocationRef loc) const;
};

Definitions resolve(const otf2::Definitions& archive);

}  // namespace ezio::analysis
