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

// A working directory: what a dead recorder left there is removed when this is made, and the
// directory is removed again when this goes out of scope unless kept, so that a failed recording
// leaves nothing behind.
class ScratchDir {
 public:
  explicit ScratchDir(std::filesystem::path dir);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& dir() const { return dir_; }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path dir_;
  bool keep_ = false;
};

// The staging directory of the archive out (staging_dir()), published when it is complete.
class Staging {
 public:
  Staging(std::filesystem::path out, bool force);
  const std::filesystem::path& dir() const { return dir_.dir(); }
  // Moves the finished archive into place.
  void publish();

 private:
  std::filesystem::path out_;
  bool force_;
  ScratchDir dir_;
};

}  // namespace ezio::recorder
