// SPDX-License-Identifier: GPL-2.0-only
#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "common/error.h"

namespace ezio {
namespace {

bool has_signature(const std::filesystem::path& p, std::string_view signature) {
  std::ifstream in(p, std::ios::binary);
  std::string head(16 << 10, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find(signature) != std::string::npos;
}

}  // namespace

OutputFile::OutputFile(const std::filesystem::path& path, std::string_view signature, bool force)
    : path_(path) {
  std::error_code ec;
  if (std::filesystem::exists(path_, ec)) {
    if (!force) fail("{} exists; give --force to replace it", path_.string());
    if (!std::filesystem::is_regular_file(path_, ec) || !has_signature(path_, signature)) {
      fail("{} exists and is not a file eziotrace wrote; not replacing it", path_.string());
    }
  }
  std::string templ = path_.string() + ".XXXXXX";
  int fd = mkstemp(templ.data());
  if (fd < 0) fail("cannot write {}: {}", path_.string(), errno_text(errno));
  temp_ = templ;
  fchmod(fd, 0644);
  file_.reset(fdopen(fd, "w"));
  if (!file_) {
    int err = errno;
    close(fd);
    std::filesystem::remove(temp_, ec);
    fail("cannot write {}: {}", path_.string(), errno_text(err));
  }
  constexpr size_t kBuffer = 1 << 20;
  buffer_ = std::make_unique<char[]>(kBuffer);
  std::setvbuf(file_.get(), buffer_.get(), _IOFBF, kBuffer);
}

OutputFile::~OutputFile() {
  if (committed_) return;
  file_.reset();
  std::error_code ec;
  std::filesystem::remove(temp_, ec);
}

void OutputFile::write(std::string_view s) { std::fwrite(s.data(), 1, s.size(), file_.get()); }

void OutputFile::commit() {
  bool ok = std::fflush(file_.get()) == 0 && !std::ferror(file_.get());
  int err = errno;
  ok = std::fclose(file_.release()) == 0 && ok;
  if (!ok) fail("cannot write {}: {}", path_.string(), errno_text(err));
  std::error_code ec;
  std::filesystem::rename(temp_, path_, ec);
  if (ec) fail("cannot write {}: {}", path_.string(), ec.message());
  committed_ = true;
}

}  // namespace ezio
