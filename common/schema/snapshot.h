// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Properties of the machine (the system tree node) of a flight recorder's snapshot
// (docs/flight-recorder.md), beside properties.h's: EZIOTRACE::STATUS is "snapshot".

namespace ezio::schema {

// The job (its cgroup), the window it holds (CLOCK_MONOTONIC ns; its start later than asked when
// the service dropped events to make room), and the events dropped so.
inline constexpr char kSnapshotJob[] = "EZIOTRACE::SNAPSHOT_JOB";
inline constexpr char kSnapshotAskedStartNs[] = "EZIOTRACE::SNAPSHOT_ASKED_START_NS";
inline constexpr char kSnapshotStartNs[] = "EZIOTRACE::SNAPSHOT_START_NS";
inline constexpr char kSnapshotEndNs[] = "EZIOTRACE::SNAPSHOT_END_NS";
inline constexpr char kSnapshotDropped[] = "EZIOTRACE::SNAPSHOT_DROPPED";
// The rule of eziotraced that took the snapshot by itself (--flight-rule); absent when asked.
inline constexpr char kSnapshotRule[] = "EZIOTRACE::SNAPSHOT_RULE";

}  // namespace ezio::schema
