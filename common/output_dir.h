// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where an archive goes, how it gets there without ever looking complete while it is not, and what
// eziotrace may remove. One rule for `record`, `run` and `merge`: eziotrace removes a directory
// only when it can prove it made it — the directory holds eziotrace's marker file (written when
// eziotrace creates it, with a text of its own) and nothing eziotrace does not write there — and
// never a protected one (/, $HOME, the working directory or one above it), never through a symbolic
// link (the directory itself, or anything in it), and never without --force unless it made the
// directory in this very run.
//
//   ezio::Staging staging(out, force);      // <out>.incomplete, made now, with the marker
//   ... write the archive into staging.dir() ...
//   staging.publish();                      // read back, then renamed to out
#include <filesystem>
#include <optional>
#include <string>

namespace ezio {

// What a directory of eziotrace's may hold; written into its marker.
enum class DirKind {
  // An OTF2 archive: eziotrace.otf2, eziotrace.def, eziotrace/ (*.evt, *.def) and
  // eziotrace-alignment/ (*.json), regular files and directories only.
  archive,
  // A private working directory (<out>.parts, <out>.alignment): regular files and directories.
  work,
};

// The marker's file name, in every directory eziotrace makes.
inline constexpr const char* kMarkerName = ".eziotrace";

// The archive directory `-o arg` names (empty: <cwd>/<program name>_eziotrace): absolute, without
// a trailing '/'. Refuses ".", ".." and "/", which cannot be an archive's own directory.
std::filesystem::path output_path(const std::string& arg, const std::string& program);

// Empty when eziotrace may remove dir as its own directory of that kind; else why not.
std::optional<std::string> why_not_removable(const std::filesystem::path& dir, DirKind kind);
// Removes dir when why_not_removable() has nothing against it, without following any symbolic
// link; otherwise throws ezio::Error saying why it is left alone.
void remove_own(const std::filesystem::path& dir, DirKind kind);

// Refuses an existing output unless force is set and it is an archive eziotrace may remove.
void check_output(const std::filesystem::path& out, bool force);

// A directory eziotrace makes, with its marker, and removes again when this goes out of scope
// unless kept or moved away, so that a failed run leaves nothing behind. Something already at that
// path is refused; with force it is removed first when it is provably eziotrace's own (left by a
// run that did not finish).
class OwnedDir {
 public:
  OwnedDir(std::filesystem::path dir, DirKind kind, bool force);
  ~OwnedDir();
  OwnedDir(const OwnedDir&) = delete;
  OwnedDir& operator=(const OwnedDir&) = delete;
  const std::filesystem::path& dir() const { return dir_; }
  void keep() { keep_ = true; }
  // Removes it now (unless kept), as the destructor would: a failure is a warning, the directory
  // left in place.
  void remove();
  // Moves the directory to `to`, inside another directory of eziotrace's whose marker covers it
  // from now on: its own marker is removed.
  void move_into(const std::filesystem::path& to);

 private:
  std::filesystem::path dir_;
  DirKind kind_;
  bool keep_ = false;
};

// The directory an archive is written into before it is complete: <out>.incomplete
std::filesystem::path staging_dir(const std::filesystem::path& out);

// The staging directory of the archive out, made when this is constructed (after check_output), and
// published when the archive is complete.
class Staging {
 public:
  Staging(std::filesystem::path out, bool force);
  const std::filesystem::path& dir() const { return dir_.dir(); }
  // Reads the archive back (its anchor and global definitions open with the OTF2 reader, every
  // location that declares events has its event file), then moves it to out, replacing an old
  // archive of eziotrace's when force was given. Throws ezio::Error, leaving nothing at out, when
  // the archive does not read back. read_back false: moved without being read back (an
  // intermediate archive whose reader checks it, RecordOptions::read_back).
  void publish(bool read_back = true);

 private:
  std::filesystem::path out_;
  bool force_;
  OwnedDir dir_;
};

}  // namespace ezio
