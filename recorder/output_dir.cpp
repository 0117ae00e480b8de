#include "recorder/output_dir.h"

#include "common/error.h"

namespace fs = std::filesystem;

namespace ezio::recorder {

fs::path default_output(const std::string& program) {
  std::string name = fs::path(program).filename().string();
  if (name.empty()) name = "trace";
  return fs::current_path() / (name + "_eziotrace");
}

static bool replaceable(const fs::path& out) {
  return fs::is_directory(out) && (fs::is_empty(out) || fs::exists(out / "eziotrace.otf2"));
}

void check_output(const fs::path& out, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!force)
    fail("{} already exists; remove it, choose another with -o, or pass --force", out.string());
  if (!replaceable(out)) {
    fail("{} exists and is not an eziotrace archive: not replacing it even with --force",
         out.string());
  }
}

fs::path staging_dir(const fs::path& out) {
  fs::path s = out;
  s += ".incomplete";
  return s;
}

void publish(const fs::path& staging, const fs::path& out, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec)) {
    check_output(out, force);
    fs::remove_all(out, ec);
    if (ec) fail("cannot replace {}: {}", out.string(), ec.message());
  }
  fs::rename(staging, out, ec);
  if (ec) fail("cannot move the archive to {}: {}", out.string(), ec.message());
}

ScratchDir::ScratchDir(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

ScratchDir::~ScratchDir() {
  if (keep_) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

Staging::Staging(fs::path out, bool force)
    : out_(std::move(out)), force_(force), dir_(staging_dir(out_)) {}

void Staging::publish() {
  recorder::publish(dir_.dir(), out_, force_);
  dir_.keep();  // it is out_ now
}

}  // namespace ezio::recorder
