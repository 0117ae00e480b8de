// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The properties of a multi-host archive (docs/cluster.md): on each host's system-tree node, the
// part's own (kernel release, loss counters, status...) and its clock map; on the root, what holds
// for the whole job (losses summed, the parts' statuses), which the analyzers read.
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "common/otf2/definitions.h"
#include "common/otf2/writer.h"
#include "converters/hosts/device_windows.h"
#include "converters/hosts/host_part.h"

namespace ezio::converters {

struct HostsReport;

// What the root sums up from the hosts.
struct HostTotals {
  std::map<std::string, uint64_t> lost;  // EZIOTRACE::LOST::<layer>, summed
  std::set<std::string> kernels;
  std::string status;  // the first host's EZIOTRACE::STATUS other than "complete"
};

// One host's system-tree node, shared by the host's parts (several tasks of one step on a node,
// each recorded by a kernel session of its own, docs/cluster.md). Its properties are its first
// part's but for: the loss counters, summed (each session lost events of its own); the
// unattributed and the not-issued requests of a device (EZIOTRACE::UNATTRIBUTED::<dev>,
// NOT_ISSUED::<dev>, and the device location's UNATTRIBUTED_REQUESTS/BYTES, NOT_ISSUED_REQUESTS),
// the union of the sessions' windows (device_windows.h): each session counts every request of the
// device that no process of any session made, so sessions open at the same time count the same
// requests, and summing them would count those again; the clock error, the largest.
struct HostNode {
  struct Value {
    std::string name;
    OTF2_Type type;
    OTF2_AttributeValue value;
    std::string text;  // a string's
  };
  HostPart first;
  size_t parts = 0;
  int64_t clock_error_ns = 0;
  std::vector<Value> properties;
  // Each part's location of a device, by the location's name ("block <dev>").
  std::map<std::string, std::vector<DeviceWindow>> device_windows;
  // The host's counts of each device (count_devices()), by the location's name.
  std::map<std::string, DeviceCounts> device_counts;
  // What each device's table counted between the host's windows (count_devices()), by the
  // location's name; only devices of which some part has a window.
  std::map<std::string, DeviceCounts> device_gaps;
  // Filled while writing: the node, its devices' location groups by name, the devices whose
  // counts are written (on the first of their locations).
  bool defined = false;
  otf2::Ref node = 0;
  std::map<std::string, otf2::Ref> device_groups;
  std::set<std::string> device_counts_written;

  void add(const HostPart& p, const otf2::Definitions& d);
  // Once every part is added: device_counts and device_gaps, each device's rule in the verbose
  // output.
  void count_devices();
};

// Whether a location (or group) name is a block device's ("block <dev>").
bool is_device_name(const std::string& name);

void write_host_properties(otf2::ArchiveWriter& w, const HostNode& host, HostTotals& totals);

// Why a part's recording is not whole, from its system tree node's EZIOTRACE::STATUS and
// STATUS_REASON: "" when it is (complete, the application crashed, a snapshot: each is whole).
std::string incomplete_recording(const otf2::Definitions& d);

void write_root_properties(otf2::ArchiveWriter& w, otf2::Ref root, const HostsReport& report,
                           const HostTotals& totals);

}  // namespace ezio::converters
