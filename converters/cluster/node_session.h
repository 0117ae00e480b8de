// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// One node's part of a job recorded by `eziotrace -- srun ...` (docs/cluster.md): the submitting
// eziotrace runs every task as `eziotrace record|run ... -- program` with the job's session in the
// environment (EZIOTRACE_SESSION: where the parts go, the clock reference); each task's eziotrace
// records its rank through its node's eziotraced into <parts>/<host>, with its clock offset to the
// reference, and leaves markers that let the submitting side say which host is missing and why.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace ezio::converters {

inline constexpr char kSessionEnv[] = "EZIOTRACE_SESSION";
// Beside a part <parts>/<name>: <name>.started when its recording began, <name>.failed (the
// error) when it failed.
inline constexpr char kStartedSuffix[] = ".started";
inline constexpr char kFailedSuffix[] = ".failed";

struct NodeSession {
  std::filesystem::path parts;  // the shared directory of the job's parts
  std::string clock_ref;        // HOST:PORT of the submitting eziotrace's clock server
};

// The environment's value for s (JSON).
std::string session_value(const NodeSession& s);

// The session this process was started in, taken out of the environment (the application and its
// children do not see it); nullopt when there is none. Fails on a malformed value.
std::optional<NodeSession> take_node_session();

// This task's part: <parts>/<host>, or <host>.<local task id> for a second task on the node.
std::filesystem::path part_path(const NodeSession& s);

// Runs record(part, clock_ref) between the markers: <part>.started first, <part>.failed with the
// error when it throws (then rethrown).
void record_part(const NodeSession& s,
                 const std::function<void(const std::filesystem::path& part,
                                          const std::string& clock_ref)>& record);

}  // namespace ezio::converters
