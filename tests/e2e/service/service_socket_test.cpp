// SPDX-License-Identifier: GPL-2.0-only
// The members of group eziotrace reach eziotraced's socket, whatever root ran before (the probe
// cache, as root, once made /run/eziotrace 0700); a socket they could not reach is refused at the
// service's start; and a refused user is told which of the two it is: not in the group, or a
// directory on the way that does not let them through.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "recorder/service/peer.h"
#include "recorder/service/socket.h"
#include "service_env.h"

namespace fs = std::filesystem;

namespace ezio::test {
namespace {

TestUsers* users = nullptr;

class Socket : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { users = new TestUsers(); }
  static void TearDownTestSuite() { delete users; }
};

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The script below, in a mount namespace of its own with a fresh /run (the machine's
// /run/eziotrace untouched): `prepare` (as root), root's in-process recording, eziotraced on the
// default socket, then user A's recording on the automatic path. Prints what it saw.
Run first_contact(const fs::path& dir, const std::string& prepare) {
  // clang-format off
  std::string script = R"SH(
set -u
ez=$1; ezd=$2; dir=$3; user=$4
mount -t tmpfs -o mode=0755 tmpfs /run || exit 90
)SH" + prepare + R"SH(
"$ez" record --no-service -o "$dir/root" -- true 2>"$dir/root.err" || echo "root failed"
echo "after root: $(stat -c '%a %U' /run/eziotrace)"
"$ezd" --foreground >"$dir/d.out" 2>"$dir/d.err" &
d=$!
i=0
until grep -q ready "$dir/d.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -gt 400 ] && break
  kill -0 $d 2>/dev/null || break
  sleep 0.05
done
echo "service: $(cat "$dir/d.out" "$dir/d.err" | tr '\n' ' ')"
echo "served: $(stat -c '%a %U' /run/eziotrace)"
runuser -u "$user" -- env -C "$dir" "$ez" record -o "$dir/user" -- true 2>"$dir/user.err"
echo "user status $?: $(tr '\n' ' ' <"$dir/user.err")"
kill $d 2>/dev/null; wait $d
)SH";
  // clang-format on
  return run({"unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", EZIO_BINARY,
              EZIO_DAEMON, dir.string(), kUserA});
}

// The issue's sequence: root records once (the probe cache makes /run/eziotrace), then the
// service starts, then a member of the group records through it.
TEST_F(Socket, GroupMemberRecordsAfterRootRecordedInProcess) {
  fs::path dir = user_dir(kUserA, "first-contact");
  chmod(dir.c_str(), 0755);  // the script writes root's files there too
  ezio::test::Run r = first_contact(dir, "");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "after root: 755 root")) << r.out;
  EXPECT_FALSE(has(r.out, "root failed")) << r.out;
  EXPECT_TRUE(has(r.out, "serving /run/eziotrace/eziotraced.sock for root and group eziotrace"))
      << r.out;
  EXPECT_TRUE(has(r.out, "user status 0")) << r.out;
  auto props = dump_archive(dir / "user" / "eziotrace.otf2")["properties"];
  EXPECT_EQ(props["EZIOTRACE::RECORDING_PATH"], "eziotraced");
}

// /run/eziotrace as an older eziotrace's probe cache left it (0700): the service opens it.
TEST_F(Socket, ServiceOpensTheDirectoryAnOlderCacheClosed) {
  fs::path dir = user_dir(kUserA, "old-cache");
  chmod(dir.c_str(), 0755);
  ezio::test::Run r = first_contact(dir, "mkdir -m 0700 /run/eziotrace");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "after root: 700 root")) << r.out;
  EXPECT_TRUE(has(r.out, "made 0755, so that group eziotrace reaches the socket")) << r.out;
  EXPECT_TRUE(has(r.out, "served: 755 root")) << r.out;
  EXPECT_TRUE(has(r.out, "user status 0")) << r.out;
}

// A socket in a directory of someone else's that the group cannot search: refused at the start,
// with the reason, rather than "serving" and refusing every member.
TEST_F(Socket, ServiceRefusesASocketTheGroupCannotReach) {
  fs::path dir = scratch_dir("service-closed");
  fs::path closed = dir / "closed";
  fs::create_directory(closed);
  chmod(dir.c_str(), 0755);
  chmod(closed.c_str(), 0700);
  ezio::test::Run r = run({EZIO_DAEMON, "--foreground", "--socket", (closed / "s.sock").string()});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_TRUE(has(r.err, "the members of group eziotrace could not reach a socket in " +
                             closed.string() + ": " + closed.string() +
                             " is mode 0700, owner root:root"))
      << r.err;
  EXPECT_FALSE(fs::exists(closed / "s.sock"));
}

TEST_F(Socket, ClientTellsNotInTheGroupFromUnreachable) {
  fs::path scratch = scratch_dir("service-messages");
  chmod(scratch.c_str(), 0755);
  fs::path open = scratch / "open", closed = scratch / "closed";
  fs::create_directory(open);
  fs::create_directory(closed);
  chmod(open.c_str(), 0755);
  chmod(closed.c_str(), 0755);
  gid_t group = recorder::service::group_id("eziotrace").value();
  UniqueFd reachable = recorder::service::listen_at(open / "s.sock", group);
  UniqueFd hidden = recorder::service::listen_at(closed / "s.sock", group);
  chmod(closed.c_str(), 0700);  // as /run/eziotrace was left by older versions
  auto record = [&](const char* user, const fs::path& socket) {
    fs::path dir = user_dir(user, "messages");
    return as_user(user,
                   {EZIO_BINARY, "record", "--service=" + socket.string(), "-o",
                    (dir / "t").string(), "--", "true"},
                   dir);
  };
  ezio::test::Run outsider = record(kUserC, open / "s.sock");
  EXPECT_NE(outsider.status, 0);
  EXPECT_TRUE(has(outsider.err, "you are not in group eziotrace")) << outsider.err;
  EXPECT_TRUE(has(outsider.err, "usermod -aG eziotrace ezio_c")) << outsider.err;
  EXPECT_FALSE(has(outsider.err, "cannot reach")) << outsider.err;

  ezio::test::Run member = record(kUserA, closed / "s.sock");
  EXPECT_NE(member.status, 0);
  EXPECT_TRUE(has(member.err, "cannot reach eziotraced's socket " + (closed / "s.sock").string() +
                                  ": the directory " + closed.string() +
                                  " (mode 0700, owner root:root) does not let you through"))
      << member.err;
  EXPECT_FALSE(has(member.err, "not in group")) << member.err;
}

}  // namespace
}  // namespace ezio::test
