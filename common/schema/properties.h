#pragma once
// The EZIOTRACE::* properties of an archive (docs/trace-model.md describes each): written by the
// recorder and the merge, read by the merge's checks, the timeline and the analyzers.
#include <string>
#include <string_view>

namespace ezio::schema {

inline constexpr std::string_view kPropertyPrefix = "EZIOTRACE::";

// Of a process's location group.
inline constexpr std::string_view kPid = "EZIOTRACE::PID";
inline constexpr std::string_view kPpid = "EZIOTRACE::PPID";
inline constexpr std::string_view kEztraceFirstTimestamp = "EZIOTRACE::EZTRACE_FIRST_TIMESTAMP";
inline constexpr std::string_view kEztraceTimeOffset = "EZIOTRACE::EZTRACE_TIME_OFFSET";
inline constexpr std::string_view kEztraceClockErrorNs = "EZIOTRACE::EZTRACE_CLOCK_ERROR_NS";

// Of a location: a thread, a block device or a page-cache row.
inline constexpr std::string_view kTid = "EZIOTRACE::TID";
inline constexpr std::string_view kEztraceThreadRank = "EZIOTRACE::EZTRACE_THREAD_RANK";
inline constexpr std::string_view kDevMajor = "EZIOTRACE::DEV_MAJOR";
inline constexpr std::string_view kDevMinor = "EZIOTRACE::DEV_MINOR";
inline constexpr std::string_view kUnattributedRequests = "EZIOTRACE::UNATTRIBUTED_REQUESTS";
inline constexpr std::string_view kUnattributedBytes = "EZIOTRACE::UNATTRIBUTED_BYTES";
inline constexpr std::string_view kReclaimedPages = "EZIOTRACE::RECLAIMED_PAGES";

// Of the machine (the system tree node): the recording.
inline constexpr std::string_view kLostPrefix = "EZIOTRACE::LOST::";                  // + layer
inline constexpr std::string_view kProbePrefix = "EZIOTRACE::PROBE::";                // + layer
inline constexpr std::string_view kUnattributedPrefix = "EZIOTRACE::UNATTRIBUTED::";  // + device
inline constexpr std::string_view kStatus = "EZIOTRACE::STATUS";
inline constexpr std::string_view kApplicationEnd = "EZIOTRACE::APPLICATION_END";
inline constexpr std::string_view kApplicationCpuNs = "EZIOTRACE::APPLICATION_CPU_NS";
inline constexpr std::string_view kCommand = "EZIOTRACE::COMMAND";
inline constexpr std::string_view kRootPid = "EZIOTRACE::ROOT_PID";
inline constexpr std::string_view kProcessesRunningAtEnd = "EZIOTRACE::PROCESSES_RUNNING_AT_END";
inline constexpr std::string_view kClock = "EZIOTRACE::CLOCK";
inline constexpr std::string_view kMonotonicStartNs = "EZIOTRACE::MONOTONIC_START_NS";
inline constexpr std::string_view kRealtimeStartNs = "EZIOTRACE::REALTIME_START_NS";
inline constexpr std::string_view kRecordVersion = "EZIOTRACE::RECORD_VERSION";

// Of the machine: the merge.
inline constexpr std::string_view kProcessesWithoutUserTrace =
    "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE";
inline constexpr std::string_view kPidsWithoutUserTrace = "EZIOTRACE::PIDS_WITHOUT_USER_TRACE";
inline constexpr std::string_view kUserLevel = "EZIOTRACE::USER_LEVEL";
inline constexpr std::string_view kAlignment = "EZIOTRACE::ALIGNMENT";
inline constexpr std::string_view kAlignmentViolations = "EZIOTRACE::ALIGNMENT_VIOLATIONS";
inline constexpr std::string_view kAlignmentCheckedCalls = "EZIOTRACE::ALIGNMENT_CHECKED_CALLS";
inline constexpr std::string_view kEztraceClosesWithoutSyscall =
    "EZIOTRACE::EZTRACE_CLOSES_WITHOUT_SYSCALL";
inline constexpr std::string_view kEztraceProcesses = "EZIOTRACE::EZTRACE_PROCESSES";
inline constexpr std::string_view kEztraceOwnIoFiltered = "EZIOTRACE::EZTRACE_OWN_IO_FILTERED";

// "EZIOTRACE::LOST::<layer>", "EZIOTRACE::PROBE::<layer>", "EZIOTRACE::UNATTRIBUTED::<device>".
inline std::string lost_property(std::string_view layer) {
  return std::string(kLostPrefix).append(layer);
}
inline std::string probe_property(std::string_view layer) {
  return std::string(kProbePrefix).append(layer);
}
inline std::string unattributed_property(std::string_view device) {
  return std::string(kUnattributedPrefix).append(device);
}

}  // namespace ezio::schema
