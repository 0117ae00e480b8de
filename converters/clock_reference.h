// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace record --clock-ref HOST[:PORT]`: this host's clock measured against a reference
// host's (`eziotrace clock serve` there) before the application starts and after the archive is
// written, kept beside the archive as kClockFileName: a node's part of a multi-node recording
// carries what maps its CLOCK_MONOTONIC onto the reference's (docs/cluster.md, Clocks).
#include <memory>
#include <string>

#include "recorder/session/record.h"

namespace ezio::converters {

inline constexpr char kClockFileName[] = "eziotrace-clock.json";

// Parses HOST[:PORT] (default port 7471); fails on an empty host or a bad port.
std::pair<std::string, uint16_t> parse_clock_ref(const std::string& ref);

// Wraps extras: its prepare, then the start measurement; its finish, then the end measurement and
// the file written into the staged archive directory.
recorder::RecordExtras with_clock_reference(recorder::RecordExtras extras, const std::string& ref);

}  // namespace ezio::converters
