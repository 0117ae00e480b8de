// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The anchor (.otf2) file of an archive a user names, checked before OTF2 is given it.
#include <filesystem>

namespace ezio::otf2 {

// `path` is the anchor file or a directory holding exactly one; throws ezio::Error if there is
// none.
std::filesystem::path find_anchor(const std::filesystem::path& path);

// OTF2's anchor-file parser can loop (practically) forever on some corrupted anchors, and a C loop
// cannot be interrupted in-process. The anchor is tiny, so this parses it first in a child with a
// time limit: false when the child hangs, crashes or fails.
bool anchor_parses(const std::filesystem::path& anchor);

// Notes an anchor this process's OTF2 writer has just written and closed without an error:
// OTF2's own output, which anchor_parses then takes as parsing without a child (a fork of a
// process this size, under load, costs milliseconds), as long as the file is the same (device,
// inode, size, modification time). Reading it back is still the caller's.
void anchor_written(const std::filesystem::path& anchor);

}  // namespace ezio::otf2
