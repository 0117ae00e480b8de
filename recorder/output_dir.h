#pragma once
// Where an archive goes, and how it gets there without ever looking complete while it is not.
#include <filesystem>
#include <string>

namespace ezio::recorder {

// <cwd>/<program name>_eziotrace
std::filesystem::path default_output(const std::string& program);
// Refuses an existing output unless force is set; with force, refuses anything that is neither an
// eziotrace archive nor empty, so that a mistyped -o never deletes a user's directory.
void check_output(const std::filesystem::path& out, bool force);
// The directory an archive is written into before it is complete: <out>.incomplete
std::filesystem::path staging_dir(const std::filesystem::path& out);
// Moves a finished staging directory to out (replacing an old archive when force was given).
void publish(const std::filesystem::path& staging, const std::filesystem::path& out, bool force);

}  // namespace ezio::recorder
