// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The EZIOTRACE::* properties of an archive (docs/trace-model.md describes each): written by the
// recorder and the merge, read by the merge's checks, the timeline and the analyzers.
#include <cstdint>
#include <string>
#include <string_view>

namespace ezio::schema {

inline constexpr char kPropertyPrefix[] = "EZIOTRACE::";

// Of a process's location group.
inline constexpr char kPid[] = "EZIOTRACE::PID";
inline constexpr char kPpid[] = "EZIOTRACE::PPID";
// On a process that exec'd a program gaining privileges (setuid, setgid, capabilities): that
// program's path. The process left the recording there; nothing of it after the exec is recorded.
inline constexpr char kLeftAtPrivilegedExec[] = "EZIOTRACE::LEFT_AT_PRIVILEGED_EXEC";
inline constexpr char kEztraceFirstTimestamp[] = "EZIOTRACE::EZTRACE_FIRST_TIMESTAMP";
inline constexpr char kEztraceTimeOffset[] = "EZIOTRACE::EZTRACE_TIME_OFFSET";
inline constexpr char kEztraceClockErrorNs[] = "EZIOTRACE::EZTRACE_CLOCK_ERROR_NS";

// Of a location: a thread, a block device or a page-cache row.
inline constexpr char kTid[] = "EZIOTRACE::TID";
inline constexpr char kEztraceThreadRank[] = "EZIOTRACE::EZTRACE_THREAD_RANK";
inline constexpr char kDevMajor[] = "EZIOTRACE::DEV_MAJOR";
inline constexpr char kDevMinor[] = "EZIOTRACE::DEV_MINOR";
inline constexpr char kUnattributedRequests[] = "EZIOTRACE::UNATTRIBUTED_REQUESTS";
inline constexpr char kUnattributedBytes[] = "EZIOTRACE::UNATTRIBUTED_BYTES";
// Requests the block layer completed without issuing them (empty PREFLUSH requests), which the
// device's statistics count as writes (docs/kernel-layers.md, "Flushes and the disk statistics").
inline constexpr char kNotIssuedRequests[] = "EZIOTRACE::NOT_ISSUED_REQUESTS";
// The node's table of unattributed and not-issued requests (bpf/block.bpf.h, never decreasing)
// as the device's session found it at its start and left it at its end, and which table it was:
// merge-hosts counts several sessions of one host from them (docs/cluster.md, "Several parts of
// one host"). Absent from parts recorded before they were written.
inline constexpr char kUnattributedTable[] = "EZIOTRACE::UNATTRIBUTED_TABLE";
inline constexpr char kUnattributedRequestsAtStart[] = "EZIOTRACE::UNATTRIBUTED_REQUESTS_AT_START";
inline constexpr char kUnattributedRequestsAtEnd[] = "EZIOTRACE::UNATTRIBUTED_REQUESTS_AT_END";
inline constexpr char kUnattributedBytesAtStart[] = "EZIOTRACE::UNATTRIBUTED_BYTES_AT_START";
inline constexpr char kUnattributedBytesAtEnd[] = "EZIOTRACE::UNATTRIBUTED_BYTES_AT_END";
inline constexpr char kNotIssuedRequestsAtStart[] = "EZIOTRACE::NOT_ISSUED_REQUESTS_AT_START";
inline constexpr char kNotIssuedRequestsAtEnd[] = "EZIOTRACE::NOT_ISSUED_REQUESTS_AT_END";
// The device's own count of completed requests (/sys/block/<dev>/stat: reads + writes + discards
// + flushes) read with the table at the session's start and end: what the device did in the
// window, to compare with the session's requests + UNATTRIBUTED + NOT_ISSUED.
inline constexpr char kDeviceRequestsAtStart[] = "EZIOTRACE::DEVICE_REQUESTS_AT_START";
inline constexpr char kDeviceRequestsAtEnd[] = "EZIOTRACE::DEVICE_REQUESTS_AT_END";
// And the bytes of those requests (its sectors read, written and discarded, times 512): absent
// from parts of an eziotraced of session 35.
inline constexpr char kDeviceBytesAtStart[] = "EZIOTRACE::DEVICE_BYTES_AT_START";
inline constexpr char kDeviceBytesAtEnd[] = "EZIOTRACE::DEVICE_BYTES_AT_END";
inline constexpr char kReclaimedPages[] = "EZIOTRACE::RECLAIMED_PAGES";

// Of the machine (the system tree node): the recording.
inline constexpr char kLostPrefix[] = "EZIOTRACE::LOST::";                  // + layer
inline constexpr char kProbePrefix[] = "EZIOTRACE::PROBE::";                // + layer
inline constexpr char kUnattributedPrefix[] = "EZIOTRACE::UNATTRIBUTED::";  // + device
// Events lost (every layer) counted on one CPU, written for the CPUs that lost any: with a ring
// per CPU, what that CPU's ring could not take (docs/costs.md, Rings per CPU).
inline constexpr char kLostOnCpuPrefix[] = "EZIOTRACE::LOST_ON_CPU::";  // + CPU number
inline constexpr char kRings[] = "EZIOTRACE::RINGS";                   // the session's ring buffers
inline constexpr char kRingBytes[] = "EZIOTRACE::RING_BYTES";          // each one's size
inline constexpr char kNotIssuedPrefix[] = "EZIOTRACE::NOT_ISSUED::";  // + device
// On a host's node of a multi-host archive: the device's requests (unattributed + not issued) and
// bytes its table counted between the host's sessions' windows, while none of them was open
// (converters/hosts/device_windows.h): in no session's counts, said here rather than lost.
inline constexpr char kOutsideWindowsPrefix[] = "EZIOTRACE::OUTSIDE_WINDOWS::";  // + device
inline constexpr char kOutsideWindowsBytesPrefix[] = "EZIOTRACE::OUTSIDE_WINDOWS_BYTES::";
inline constexpr char kStatus[] = "EZIOTRACE::STATUS";
// Why the status is "interrupted": the signal the recorder received, or that eziotraced went away
// (then nothing after it is recorded and the loss counters are unknown). Absent otherwise.
inline constexpr char kStatusReason[] = "EZIOTRACE::STATUS_REASON";
inline constexpr char kApplicationEnd[] = "EZIOTRACE::APPLICATION_END";
inline constexpr char kApplicationCpuNs[] = "EZIOTRACE::APPLICATION_CPU_NS";
inline constexpr char kCommand[] = "EZIOTRACE::COMMAND";
// The command as the user typed it, when eziotrace ran another (an MPI launcher given EZTrace's
// settings as options, converters/eztrace/mpi_launcher.cpp): the one the analyzers show.
inline constexpr char kUserCommand[] = "EZIOTRACE::USER_COMMAND";
inline constexpr char kRootPid[] = "EZIOTRACE::ROOT_PID";
inline constexpr char kProcessesRunningAtEnd[] = "EZIOTRACE::PROCESSES_RUNNING_AT_END";
inline constexpr char kClock[] = "EZIOTRACE::CLOCK";
inline constexpr char kKernelRelease[] = "EZIOTRACE::KERNEL_RELEASE";  // uname -r
// The Slurm job and step the recording ran in (SLURM_JOB_ID, SLURM_STEP_ID; strings), when it
// did.
inline constexpr char kSlurmJobId[] = "EZIOTRACE::SLURM_JOB_ID";
inline constexpr char kSlurmStepId[] = "EZIOTRACE::SLURM_STEP_ID";
// How the kernel side ran: "in-process" (the recorder loaded the programs) or "eziotraced".
inline constexpr char kRecordingPath[] = "EZIOTRACE::RECORDING_PATH";
inline constexpr char kMonotonicStartNs[] = "EZIOTRACE::MONOTONIC_START_NS";
inline constexpr char kRealtimeStartNs[] = "EZIOTRACE::REALTIME_START_NS";
inline constexpr char kRecordVersion[] = "EZIOTRACE::RECORD_VERSION";
// How the kernel layers' events carry their fields (docs/trace-model.md, "Trace model 2"): absent
// in archives written before it, which are model 1; common/otf2/model_upgrade.h reads model 2 as 1.
inline constexpr char kTraceModel[] = "EZIOTRACE::TRACE_MODEL";
inline constexpr uint64_t kTraceModelCompact = 2;
// The eziotrace that wrote the archive (common/version.h: "0.1.0 (git 1a2b3c4)"): the recorder for
// a kernel archive, the merge for a merged one.
inline constexpr char kVersion[] = "EZIOTRACE::VERSION";

// Of the machine: the merge.
inline constexpr char kProcessesWithoutUserTrace[] = "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE";
inline constexpr char kPidsWithoutUserTrace[] = "EZIOTRACE::PIDS_WITHOUT_USER_TRACE";
inline constexpr char kUserLevel[] = "EZIOTRACE::USER_LEVEL";
inline constexpr char kAlignment[] = "EZIOTRACE::ALIGNMENT";
inline constexpr char kAlignmentViolations[] = "EZIOTRACE::ALIGNMENT_VIOLATIONS";
inline constexpr char kAlignmentCheckedCalls[] = "EZIOTRACE::ALIGNMENT_CHECKED_CALLS";
inline constexpr char kAlignmentUnverifiable[] = "EZIOTRACE::ALIGNMENT_UNVERIFIABLE";
inline constexpr char kEztraceClosesWithoutSyscall[] = "EZIOTRACE::EZTRACE_CLOSES_WITHOUT_SYSCALL";
inline constexpr char kEztraceProcesses[] = "EZIOTRACE::EZTRACE_PROCESSES";
inline constexpr char kEztraceOwnIoFiltered[] = "EZIOTRACE::EZTRACE_OWN_IO_FILTERED";
// The kernel archive's EZIOTRACE::VERSION, kept by the merge: the eziotrace that recorded it.
inline constexpr char kRecorderVersion[] = "EZIOTRACE::RECORDER_VERSION";

// Archives of several hosts (eziotrace merge-hosts, docs/cluster.md). On the root node:
inline constexpr char kHosts[] = "EZIOTRACE::HOSTS";                 // hosts merged
inline constexpr char kHostsStatus[] = "EZIOTRACE::HOSTS_STATUS";    // complete | partial: ...
inline constexpr char kHostsMissing[] = "EZIOTRACE::HOSTS_MISSING";  // parts not (fully) merged
// On each host's node: its clock mapped onto the reference host's timeline.
inline constexpr char kClockReference[] = "EZIOTRACE::CLOCK_REFERENCE";  // the reference host
inline constexpr char kClockOffsetStartNs[] = "EZIOTRACE::CLOCK_OFFSET_START_NS";  // INT64
inline constexpr char kClockOffsetEndNs[] = "EZIOTRACE::CLOCK_OFFSET_END_NS";      // INT64
inline constexpr char kClockDriftPpm[] = "EZIOTRACE::CLOCK_DRIFT_PPM";             // DOUBLE
inline constexpr char kClockErrorNs[] = "EZIOTRACE::CLOCK_ERROR_NS";               // UINT64
inline constexpr char kClockEndMissing[] = "EZIOTRACE::CLOCK_END_MISSING";  // why, when it is

// "EZIOTRACE::LOST::<layer>", "EZIOTRACE::PROBE::<layer>", "EZIOTRACE::UNATTRIBUTED::<device>".
inline std::string lost_property(std::string_view layer) {
  return std::string(kLostPrefix).append(layer);
}
inline std::string lost_on_cpu_property(unsigned cpu) {
  return std::string(kLostOnCpuPrefix).append(std::to_string(cpu));
}
inline std::string probe_property(std::string_view layer) {
  return std::string(kProbePrefix).append(layer);
}
inline std::string unattributed_property(std::string_view device) {
  return std::string(kUnattributedPrefix).append(device);
}
inline std::string not_issued_property(std::string_view device) {
  return std::string(kNotIssuedPrefix).append(device);
}
inline std::string outside_windows_property(std::string_view device) {
  return std::string(kOutsideWindowsPrefix).append(device);
}
inline std::string outside_windows_bytes_property(std::string_view device) {
  return std::string(kOutsideWindowsBytesPrefix).append(device);
}

}  // namespace ezio::schema
