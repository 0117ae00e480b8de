// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where a recording command's archive goes (eziotrace record, eziotrace run): the directory -o
// names (else <program>_eziotrace in the working directory), staged from before anything runs, so
// that whatever is in the way is refused first (common/output_dir.h), and given to the user the
// application runs as (sudo) before it is published whole.
#include <filesystem>
#include <string>

#include "common/output_dir.h"
#include "recorder/session/privileges.h"

namespace ezio::recorder {

class ArchiveOutput {
 public:
  // output: -o's value (empty: the default for program); force: --force.
  ArchiveOutput(const std::filesystem::path& output, const std::string& program, bool force);
  // Where the archive is published.
  const std::filesystem::path& path() const { return path_; }
  // Where it is written until then.
  const std::filesystem::path& staged() const { return staging_.dir(); }
  // Gives it to user, then publishes it (read back first unless read_back is false:
  // Staging::publish).
  void publish(const TargetUser& user, bool read_back = true);

 private:
  std::filesystem::path path_;
  Staging staging_;
};

}  // namespace ezio::recorder
