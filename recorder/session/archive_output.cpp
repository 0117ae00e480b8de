// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/archive_output.h"

namespace ezio::recorder {

ArchiveOutput::ArchiveOutput(const std::filesystem::path& output, const std::string& program,
                             bool force)
    : path_(output_path(output.string(), program)), staging_(path_, force) {}

void ArchiveOutput::publish(const TargetUser& user, bool read_back) {
  give_to(staging_.dir(), user);
  staging_.publish(read_back);
}

}  // namespace ezio::recorder
