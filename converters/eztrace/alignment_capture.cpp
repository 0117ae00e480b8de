// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/alignment_capture.h"

#include "converters/eztrace/discovery.h"
#include "converters/eztrace/environment.h"

namespace ezio::converters {

AlignmentCapture::AlignmentCapture(const std::filesystem::path& out, std::vector<std::string>& env,
                                   bool force)
    : dir_(std::filesystem::path(out) += ".alignment", DirKind::work, force) {
  // After EZTrace's libraries, whatever put them there (the eztrace launcher prepends its own).
  std::string preload = env_value(env, "LD_PRELOAD").value_or("");
  preload += (preload.empty() ? "" : ":") + preload_helper_path().string();
  set_env(env, "LD_PRELOAD", preload);
  set_env(env, "EZIOTRACE_SIDECAR_DIR", dir_.dir().string());
}

size_t AlignmentCapture::store_into(const std::filesystem::path& archive_dir) {
  std::filesystem::path to = archive_dir / kAlignmentDirName;
  dir_.move_into(to);
  std::error_code ec;
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(to, ec))
    n += e.path().extension() == ".json";
  return n;
}

}  // namespace ezio::converters
