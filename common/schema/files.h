// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The files of an eziotrace archive directory.
#include <string_view>

namespace ezio::schema {

// OTF2's anchor file: what ViTE, otf2-print and every eziotrace command open.
inline constexpr char kAnchorFile[] = "eziotrace.otf2";
// OTF2's global definitions, beside the anchor.
inline constexpr char kDefinitionsFile[] = "eziotrace.def";
// The archive's name inside the directory (the anchor's stem, OTF2's archive name).
inline constexpr char kArchiveName[] = "eziotrace";
// The EZTrace alignment data `eziotrace record` keeps for `eziotrace merge` (a directory).
inline constexpr char kAlignmentDir[] = "eziotrace-alignment";

}  // namespace ezio::schema
