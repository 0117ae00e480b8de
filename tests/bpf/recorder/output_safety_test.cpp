// SPDX-License-Identifier: GPL-2.0-only
// What `eziotrace record`, `eziotrace run` and `eziotrace merge` may remove: only what eziotrace
// can prove it made, never without --force, never through a symbolic link. In every case a
// user's file survives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::eziotrace;

namespace {

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// `eziotrace args...` run from `cwd`.
ezio::test::Run eziotrace_in(const fs::path& cwd, const std::vector<std::string>& args) {
  std::string cmd = "cd \"$0\" && exec \"$@\"";
  std::vector<std::string> argv = {"sh", "-c", cmd, cwd.string(), EZIO_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return ezio::test::run(argv);
}

// A real archive of eziotrace's at dir (recorded now).
void record_archive(const fs::path& dir) {
  auto r = eziotrace({"record", "--layers", "syscall", "-o", dir.string(), "--", "true"});
  ASSERT_EQ(r.status, 0) << r.err;
}

}  // namespace

TEST(OutputSafety, AForeignIncompleteDirectoryIsRefusedNotRemoved) {
  auto dir = ezio::test::scratch_dir("safety-incomplete");
  fs::create_directories(dir / "r.incomplete");
  write(dir / "r.incomplete" / "x", "d\n");
  auto r = eziotrace({"record", "-o", (dir / "r").string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("r.incomplete is in the way"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(dir / "r.incomplete" / "x"), "d\n");
  EXPECT_FALSE(fs::exists(dir / "r"));
  // Not even with --force: eziotrace did not make it.
  auto f = eziotrace({"record", "-f", "-o", (dir / "r").string(), "--", "true"});
  EXPECT_EQ(f.status, 1);
  EXPECT_EQ(ezio::test::read_text(dir / "r.incomplete" / "x"), "d\n");
}

TEST(OutputSafety, AForeignPartsDirectoryIsRefusedNotRemoved) {
  auto dir = ezio::test::scratch_dir("safety-parts");
  fs::create_directories(dir / "m.parts");
  write(dir / "m.parts" / "x", "d\n");
  for (bool force : {false, true}) {
    std::vector<std::string> args = {"run", "-o", (dir / "m").string(), "--", "true"};
    if (force) args.insert(args.begin() + 1, "-f");
    auto r = eziotrace(args);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("m.parts is in the way"), std::string::npos) << r.err;
    EXPECT_EQ(ezio::test::read_text(dir / "m.parts" / "x"), "d\n");
    EXPECT_FALSE(fs::exists(dir / "m"));
    EXPECT_FALSE(fs::exists(dir / "m.incomplete"));
  }
}

TEST(OutputSafety, AForeignAlignmentDirectoryIsRefusedNotRemoved) {
  auto dir = ezio::test::scratch_dir("safety-alignment");
  fs::create_directories(dir / "k.alignment");
  write(dir / "k.alignment" / "x", "d\n");
  auto r = eziotrace({"record", "--eztrace-alignment", "-o", (dir / "k").string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("k.alignment is in the way"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(dir / "k.alignment" / "x"), "d\n");
  EXPECT_FALSE(fs::exists(dir / "k"));
}

TEST(OutputSafety, ForceNeverTakesADirectoryForAnArchiveByItsAnchorName) {
  auto dir = ezio::test::scratch_dir("safety-anchor-name");
  fs::create_directories(dir / "f");
  write(dir / "f" / "eziotrace.otf2", "x\n");
  write(dir / "f" / "precious", "p\n");
  auto r = eziotrace({"record", "-f", "-o", (dir / "f").string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("will not replace it, even with --force"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(dir / "f" / "precious"), "p\n");
  EXPECT_EQ(ezio::test::read_text(dir / "f" / "eziotrace.otf2"), "x\n");
  EXPECT_FALSE(fs::exists(dir / "f.incomplete"));
}

TEST(OutputSafety, ForceNeverEmptiesTheWorkingDirectory) {
  auto dir = ezio::test::scratch_dir("safety-dot");
  write(dir / "eziotrace.otf2", "x\n");
  write(dir / "precious", "p\n");
  for (const char* out : {".", "./", "..", "/"}) {
    auto r = eziotrace_in(dir, {"record", "-f", "-o", out, "--", "true"});
    EXPECT_EQ(r.status, 1) << out;
    EXPECT_NE(r.err.find("name the archive's own directory"), std::string::npos) << r.err;
    EXPECT_EQ(ezio::test::read_text(dir / "precious"), "p\n") << out;
  }
  // The working directory named by its own name: still protected, even when it holds only what
  // an archive of eziotrace's holds.
  fs::path own = dir / "own";
  record_archive(own);
  auto r = eziotrace_in(own, {"record", "-f", "-o", own.string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("it is the working directory"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(own / "eziotrace.otf2"));
  EXPECT_EQ(ezio::test::read_text(dir / "precious"), "p\n");
}

TEST(OutputSafety, ForceReplacesItsOwnArchiveButNotAUsersFileAddedToIt) {
  auto dir = ezio::test::scratch_dir("safety-own");
  fs::path out = dir / "a";
  record_archive(out);
  EXPECT_TRUE(fs::exists(out / ".eziotrace"));
  auto again = eziotrace({"record", "-o", out.string(), "--", "true"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(eziotrace({"record", "-f", "-o", out.string(), "--", "true"}).status, 0);
  write(out / "notes.txt", "mine\n");
  auto r = eziotrace({"record", "-f", "-o", out.string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(out / "notes.txt"), "mine\n");
}

TEST(OutputSafety, SymbolicLinksAreNeverFollowedIntoDeletion) {
  auto dir = ezio::test::scratch_dir("safety-symlinks");
  fs::path archive = dir / "archive";
  record_archive(archive);
  fs::path user = dir / "user";
  fs::create_directories(user);
  write(user / "precious", "p\n");

  // The output is a link to an archive of eziotrace's: neither the link nor the archive goes.
  fs::create_directory_symlink(archive, dir / "linked");
  auto r = eziotrace({"record", "-f", "-o", (dir / "linked").string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "linked"));
  EXPECT_TRUE(fs::exists(archive / "eziotrace.otf2"));

  // The staging directory is a link to the user's directory.
  fs::create_directory_symlink(user, dir / "s.incomplete");
  r = eziotrace({"record", "-f", "-o", (dir / "s").string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(user / "precious"), "p\n");

  // Inside an archive of eziotrace's: a link named like its event directory, to the user's.
  fs::path other = dir / "other";
  record_archive(other);
  fs::rename(other / "eziotrace", dir / "moved_events");
  fs::create_directory_symlink(user, other / "eziotrace");
  r = eziotrace({"record", "-f", "-o", other.string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(ezio::test::read_text(user / "precious"), "p\n");
  EXPECT_TRUE(fs::exists(other / "eziotrace.otf2"));
}

// A recorder that died leaves <out>.incomplete with eziotrace's marker: it is named, and removed
// only with --force.
TEST(OutputSafety, ALeftoverStagingDirectoryGoesOnlyWithForce) {
  auto dir = ezio::test::scratch_dir("safety-leftover");
  record_archive(dir / "left");
  fs::rename(dir / "left", dir / "t.incomplete");
  auto r = eziotrace({"record", "-o", (dir / "t").string(), "--", "true"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("did not finish"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "t.incomplete" / "eziotrace.otf2"));
  auto f = eziotrace({"record", "-f", "-o", (dir / "t").string(), "--", "true"});
  EXPECT_EQ(f.status, 0) << f.err;
  EXPECT_FALSE(fs::exists(dir / "t.incomplete"));
  EXPECT_TRUE(fs::exists(dir / "t" / "eziotrace.otf2"));
}

TEST(OutputSafety, MergeNeverWritesIntoAnExistingDirectory) {
  auto dir = ezio::test::scratch_dir("safety-merge");
  fs::create_directories(dir / "o");
  write(dir / "o" / "precious", "p\n");
  record_archive(dir / "k");
  for (bool force : {false, true}) {
    std::vector<std::string> args = {"merge", (dir / "k").string(), (dir / "k").string(), "-o",
                                     (dir / "o").string()};
    if (force) args.push_back("-f");
    auto r = eziotrace(args);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(force ? "will not replace it" : "already exists"), std::string::npos)
        << r.err;
    EXPECT_EQ(ezio::test::read_text(dir / "o" / "precious"), "p\n");
    EXPECT_FALSE(fs::exists(dir / "o" / "eziotrace.otf2"));
  }
}
