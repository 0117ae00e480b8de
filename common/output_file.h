// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// An output file (an export, a report), written beside its final path and renamed there only when
// complete, so that a half-written file is never presented as complete. An existing file is
// replaced only with --force and only when its first 16 KiB hold `signature` (a file eziotrace
// made).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>

namespace ezio {

class OutputFile {
 public:
  OutputFile(const std::filesystem::path& path, std::string_view signature, bool force);
  ~OutputFile();  // removes the temporary file when commit() was not reached
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* get() const { return file_.get(); }
  void write(std::string_view s);
  // Flushes, checks every write went through, and moves the file to its path.
  void commit();

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::filesystem::path path_, temp_;
  std::unique_ptr<char[]> buffer_;  // outlives file_, which uses it
  std::unique_ptr<std::FILE, Closer> file_;
  bool committed_ = false;
};

}  // namespace ezio
