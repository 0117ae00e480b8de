// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/privileges.h"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/error.h"

namespace ezio::recorder {
namespace {

bool has_effective_capability(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

std::optional<unsigned> env_id(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  unsigned id = 0;
  std::string_view s(v);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (ec != std::errc() || p != s.data() + s.size()) fail("{}={} is not a numeric id", name, v);
  return id;
}

}  // namespace

void check_recording_privileges() {
  // Root is not enough by itself: a container, capsh or setpriv can take capabilities from it,
  // and the kernel then refuses the programs with EPERM, which looks like a kernel that lacks the
  // hooks. CAP_SYS_ADMIN stands for both (the kernel's bpf_capable() and perfmon_capable()).
  bool admin = has_effective_capability(CAP_SYS_ADMIN);
  bool bpf = admin || has_effective_capability(CAP_BPF);
  bool perfmon = admin || has_effective_capability(CAP_PERFMON);
  if (bpf && perfmon) return;
  std::string missing =
      !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON" : (!bpf ? "CAP_BPF" : "CAP_PERFMON");
  if (geteuid() == 0) {
    fail(
        "recording needs the CAP_BPF and CAP_PERFMON capabilities (or CAP_SYS_ADMIN); this "
        "process runs as root but lacks {} (and CAP_SYS_ADMIN): its capabilities were reduced "
        "(a container, capsh, setpriv). Give it back {}.",
        missing, missing);
  }
  fail(
      "recording needs root, or the CAP_BPF and CAP_PERFMON capabilities; this process "
      "(uid {}) lacks {}. Run it with sudo: the application still runs as you.",
      geteuid(), missing);
}

TargetUser target_user() {
  TargetUser u;
  u.uid = getuid();
  u.gid = getgid();
  auto sudo_uid = env_id("SUDO_UID");
  auto sudo_gid = env_id("SUDO_GID");
  if (!sudo_uid || geteuid() != 0 || *sudo_uid == 0) return u;
  u.drop = true;
  u.uid = *sudo_uid;
  u.gid = sudo_gid.value_or(*sudo_uid);
  // The groups are looked up here, before the launch: in the child they would be I/O of the
  // traced process.
  if (passwd* pw = getpwuid(u.uid)) {
    int n = 64;
    u.groups.resize(n);
    while (getgrouplist(pw->pw_name, u.gid, u.groups.data(), &n) < 0) u.groups.resize(n);
    u.groups.resize(n);
  } else {
    u.groups = {u.gid};
  }
  return u;
}

void give_to(const std::filesystem::path& path, const TargetUser& user) {
  if (!user.drop) return;
  auto chown_one = [&](const std::filesystem::path& p) {
    if (lchown(p.c_str(), user.uid, user.gid) != 0) {
      fail("cannot give {} to uid {}: {}", p.string(), user.uid, errno_text(errno));
    }
  };
  chown_one(path);
  if (std::filesystem::is_directory(path)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(path)) chown_one(e.path());
  }
}

}  // namespace ezio::recorder
