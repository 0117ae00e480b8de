// SPDX-License-Identifier: GPL-2.0-only
#include "common/output_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/error.h"
#include "common/otf2/writer.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::DirKind;
using ezio::OwnedDir;

namespace {

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// What an archive directory of eziotrace's holds, made through the API (marker included).
fs::path fake_archive(const fs::path& dir) {
  {
    OwnedDir made(dir, DirKind::archive, false);
    made.keep();
  }
  write(dir / "eziotrace.otf2", "anchor");
  write(dir / "eziotrace.def", "defs");
  fs::create_directories(dir / "eziotrace");
  write(dir / "eziotrace" / "0.evt", "events");
  write(dir / "eziotrace" / "0.def", "");
  fs::create_directories(dir / "eziotrace-alignment");
  write(dir / "eziotrace-alignment" / "12.json", "{}");
  return dir;
}

// Runs f with the working directory set to dir.
template <typename F>
void in_directory(const fs::path& dir, F f) {
  fs::path old = fs::current_path();
  fs::current_path(dir);
  f();
  fs::current_path(old);
}

}  // namespace

TEST(OutputDir, ExistingArchiveNeedsForce) {
  auto dir = fake_archive(ezio::test::scratch_dir("output_force") / "a_eziotrace");
  EXPECT_THROW(ezio::check_output(dir, false), ezio::Error);
  EXPECT_NO_THROW(ezio::check_output(dir, true));
}

TEST(OutputDir, ForceNeverReplacesAForeignDirectory) {
  auto dir = ezio::test::scratch_dir("output_foreign");
  write(dir / "thesis.tex", "precious");
  EXPECT_THROW(ezio::check_output(dir, true), ezio::Error);
}

TEST(OutputDir, AnAnchorNameIsNoProof) {
  auto dir = ezio::test::scratch_dir("output_anchor_name");
  write(dir / "eziotrace.otf2", "x");
  auto why = ezio::why_not_removable(dir, DirKind::archive);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("no eziotrace marker"), std::string::npos) << *why;
  EXPECT_THROW(ezio::remove_own(dir, DirKind::archive), ezio::Error);
  EXPECT_TRUE(fs::exists(dir / "eziotrace.otf2"));
}

TEST(OutputDir, AMarkerWithOtherTextIsNoProof) {
  auto dir = ezio::test::scratch_dir("output_marker_text");
  write(dir / ezio::kMarkerName, "I made this\n");
  EXPECT_TRUE(ezio::why_not_removable(dir, DirKind::archive));
  EXPECT_TRUE(ezio::why_not_removable(dir, DirKind::work));
}

TEST(OutputDir, AWorkingDirectoryIsNotAnArchive) {
  auto base = ezio::test::scratch_dir("output_kind");
  {
    OwnedDir w(base / "w", DirKind::work, false);
    w.keep();
  }
  EXPECT_TRUE(ezio::why_not_removable(base / "w", DirKind::archive));
  EXPECT_FALSE(ezio::why_not_removable(base / "w", DirKind::work));
}

TEST(OutputDir, ItsOwnArchiveIsRemovedWhole) {
  auto dir = fake_archive(ezio::test::scratch_dir("output_own") / "a");
  EXPECT_FALSE(ezio::why_not_removable(dir, DirKind::archive));
  ezio::remove_own(dir, DirKind::archive);
  EXPECT_FALSE(fs::exists(dir));
}

TEST(OutputDir, AnythingAnArchiveDoesNotHoldKeepsItAll) {
  auto base = ezio::test::scratch_dir("output_extra");
  for (const fs::path& extra : {fs::path("notes.txt"), fs::path("eziotrace") / "notes.txt",
                                fs::path("eziotrace-alignment") / "x.txt", fs::path("sub") / "x"}) {
    auto dir = fake_archive(base / "a");
    fs::create_directories((dir / extra).parent_path());
    write(dir / extra, "mine");
    auto why = ezio::why_not_removable(dir, DirKind::archive);
    ASSERT_TRUE(why) << extra;
    EXPECT_NE(why->find(extra.filename().string()), std::string::npos) << *why;
    EXPECT_THROW(ezio::remove_own(dir, DirKind::archive), ezio::Error);
    EXPECT_TRUE(fs::exists(dir / extra));
    fs::remove_all(dir);
  }
}

TEST(OutputDir, SymbolicLinksAreNeverFollowed) {
  auto base = ezio::test::scratch_dir("output_links");
  fs::path user = base / "user";
  fs::create_directories(user);
  write(user / "precious", "p");
  // A link to an archive of eziotrace's is not removed, nor is the archive.
  auto archive = fake_archive(base / "archive");
  fs::create_directory_symlink(archive, base / "link");
  EXPECT_THROW(ezio::remove_own(base / "link", DirKind::archive), ezio::Error);
  EXPECT_TRUE(fs::exists(archive / "eziotrace.otf2"));
  // A link inside, in place of the event directory or of a file, to the user's files.
  fs::remove_all(archive / "eziotrace");
  fs::create_directory_symlink(user, archive / "eziotrace");
  EXPECT_THROW(ezio::remove_own(archive, DirKind::archive), ezio::Error);
  fs::remove(archive / "eziotrace");
  fs::create_symlink(user / "precious", archive / "eziotrace.def.tmp");
  EXPECT_THROW(ezio::remove_own(archive, DirKind::archive), ezio::Error);
  fs::remove(archive / "eziotrace.def.tmp");
  fs::remove(archive / "eziotrace.def");
  fs::create_symlink(user / "precious", archive / "eziotrace.def");
  EXPECT_THROW(ezio::remove_own(archive, DirKind::archive), ezio::Error);
  // A working directory with a link inside.
  {
    OwnedDir w(base / "w", DirKind::work, false);
    w.keep();
  }
  fs::create_directory_symlink(user, base / "w" / "eztrace");
  EXPECT_THROW(ezio::remove_own(base / "w", DirKind::work), ezio::Error);
  // The marker itself as a link to a copy of the real one.
  {
    OwnedDir w(base / "w2", DirKind::work, false);
    w.keep();
  }
  fs::rename(base / "w2" / ezio::kMarkerName, user / "marker");
  fs::create_symlink(user / "marker", base / "w2" / ezio::kMarkerName);
  EXPECT_TRUE(ezio::why_not_removable(base / "w2", DirKind::work));
  EXPECT_EQ(fs::file_size(user / "precious"), 1u);
  EXPECT_TRUE(fs::exists(archive / "eziotrace.otf2"));
}

TEST(OutputDir, ProtectedDirectoriesAreNeverRemoved) {
  auto base = ezio::test::scratch_dir("output_protected");
  auto dir = fake_archive(base / "a");
  in_directory(dir, [&] {
    auto why = ezio::why_not_removable(dir, DirKind::archive);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("working directory"), std::string::npos) << *why;
  });
  in_directory(dir / "eziotrace", [&] {
    auto why = ezio::why_not_removable(dir, DirKind::archive);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("above the working directory"), std::string::npos) << *why;
  });
  EXPECT_TRUE(ezio::why_not_removable("/", DirKind::archive));
  EXPECT_TRUE(fs::exists(dir / "eziotrace.otf2"));
}

TEST(OutputDir, OutputPathRefusesWhatCannotBeAnArchivesOwnDirectory) {
  for (const char* arg : {".", "./", "..", "/", "a/..", "a/."}) {
    EXPECT_THROW(ezio::output_path(arg, "prog"), ezio::Error) << arg;
  }
  EXPECT_EQ(ezio::output_path("x/", "prog"), fs::current_path() / "x");
  EXPECT_EQ(ezio::output_path("", "/usr/bin/fio"), fs::current_path() / "fio_eziotrace");
}

TEST(OutputDir, OwnedDirRefusesAForeignDirectoryEvenWithForce) {
  auto base = ezio::test::scratch_dir("output_owned_foreign");
  fs::create_directories(base / "d");
  write(base / "d" / "x", "mine");
  for (bool force : {false, true}) {
    EXPECT_THROW(OwnedDir(base / "d", DirKind::work, force), ezio::Error);
    EXPECT_TRUE(fs::exists(base / "d" / "x"));
  }
  fs::create_directory_symlink(base / "d", base / "l");
  EXPECT_THROW(OwnedDir(base / "l", DirKind::work, true), ezio::Error);
  EXPECT_TRUE(fs::exists(base / "d" / "x"));
}

TEST(OutputDir, OwnedDirReplacesItsOwnLeftoverOnlyWithForce) {
  auto base = ezio::test::scratch_dir("output_owned_leftover");
  {
    OwnedDir left(base / "d", DirKind::work, false);
    write(left.dir() / "part", "old");
    left.keep();
  }
  EXPECT_THROW(OwnedDir(base / "d", DirKind::work, false), ezio::Error);
  EXPECT_TRUE(fs::exists(base / "d" / "part"));
  {
    OwnedDir again(base / "d", DirKind::work, true);
    EXPECT_FALSE(fs::exists(base / "d" / "part"));
    EXPECT_TRUE(fs::exists(base / "d" / ezio::kMarkerName));
  }
  EXPECT_FALSE(fs::exists(base / "d"));  // removed when it went out of scope
}

TEST(OutputDir, OwnedDirLeavesWhatSomeoneElsePutIntoIt) {
  auto base = ezio::test::scratch_dir("output_owned_added");
  {
    OwnedDir d(base / "d", DirKind::archive, false);
    write(d.dir() / "mine", "user");
  }
  EXPECT_TRUE(fs::exists(base / "d" / "mine"));
}

TEST(OutputDir, MoveIntoDropsTheMarker) {
  auto base = ezio::test::scratch_dir("output_move");
  fs::create_directories(base / "archive");
  {
    OwnedDir d(base / "a", DirKind::work, false);
    write(d.dir() / "1.json", "{}");
    d.move_into(base / "archive" / "eziotrace-alignment");
  }
  EXPECT_TRUE(fs::exists(base / "archive" / "eziotrace-alignment" / "1.json"));
  EXPECT_FALSE(fs::exists(base / "archive" / "eziotrace-alignment" / ezio::kMarkerName));
  EXPECT_FALSE(fs::exists(base / "a"));
}

TEST(OutputDir, PublishRefusesAnArchiveThatDoesNotReadBack) {
  auto base = ezio::test::scratch_dir("output_publish_broken");
  auto out = base / "p_eziotrace";
  {
    ezio::Staging staging(out, false);
    EXPECT_EQ(staging.dir(), base / "p_eziotrace.incomplete");
    write(staging.dir() / "eziotrace.otf2", "");  // what a full disk left
    EXPECT_THROW(staging.publish(), ezio::Error);
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(base / "p_eziotrace.incomplete"));
}

TEST(OutputDir, PublishMovesAnArchiveThatReadsBackIntoPlace) {
  auto base = ezio::test::scratch_dir("output_publish");
  auto out = base / "p_eziotrace";
  fake_archive(out);  // an old archive of eziotrace's, replaced with force
  ezio::Staging staging(out, true);
  {
    ezio::otf2::ArchiveWriter w(staging.dir());
    auto node = w.system_tree_node("machine", "node");
    auto group = w.location_group("process", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
    w.location(1, "thread", OTF2_LOCATION_TYPE_CPU_THREAD, group);
    w.close();
  }
  staging.publish();
  EXPECT_TRUE(fs::exists(out / "eziotrace.otf2"));
  EXPECT_TRUE(fs::exists(out / ezio::kMarkerName));
  EXPECT_FALSE(fs::exists(out / "eziotrace-alignment"));  // the old archive is gone
  EXPECT_FALSE(fs::exists(base / "p_eziotrace.incomplete"));
}
