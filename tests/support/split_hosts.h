// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Splits one host's archive into per-host parts, as if its processes had run on several hosts:
// real MPI jobs recorded on this machine become the parts `eziotrace merge-hosts` takes. Each part
// keeps the archive's node properties, its processes' location groups and locations, their events
// unchanged, and every communicator (whose members may then be locations of other parts, as on a
// cluster where each host's part knows its job's communicators).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ezio::test {

// Writes <out>/<hosts[i]>/eziotrace.otf2 for each host; host_of(group name) gives the index of the
// host of each location group (locations of no group go to the first host); `properties` are
// added to every part's node (what another recorder would write there: Slurm ids), and
// `device_properties` to every block device's location (a session's window of the node's table,
// as several sessions of one host would have written it). One host renames an archive's host.
// Returns the parts' directories.
std::vector<std::filesystem::path> split_hosts(
    const std::filesystem::path& anchor, const std::vector<std::string>& hosts,
    const std::function<size_t(const std::string& group)>& host_of,
    const std::filesystem::path& out, const std::map<std::string, std::string>& properties = {},
    const std::map<std::string, uint64_t>& device_properties = {});

}  // namespace ezio::test
