#include "recorder/output_dir.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "run.h"

namespace fs = std::filesystem;
using namespace ezio::recorder;

TEST(OutputDir, ExistingArchiveNeedsForce) {
  auto dir = ezio::test::scratch_dir("output_force") / "a_eziotrace";
  fs::create_directories(dir);
  std::ofstream(dir / "eziotrace.otf2") << "x";
  EXPECT_THROW(check_output(dir, false), ezio::Error);
  EXPECT_NO_THROW(check_output(dir, true));
}

TEST(OutputDir, ForceNeverReplacesAForeignDirectory) {
  auto dir = ezio::test::scratch_dir("output_foreign");
  std::ofstream(dir / "thesis.tex") << "precious";
  EXPECT_THROW(check_output(dir, true), ezio::Error);
}

TEST(OutputDir, PublishMovesStagingIntoPlace) {
  auto base = ezio::test::scratch_dir("output_publish");
  auto out = base / "p_eziotrace";
  auto staging = staging_dir(out);
  EXPECT_EQ(staging.filename(), "p_eziotrace.incomplete");
  fs::create_directories(staging);
  std::ofstream(staging / "eziotrace.otf2") << "new";
  publish(staging, out, false);
  EXPECT_TRUE(fs::exists(out / "eziotrace.otf2"));
  EXPECT_FALSE(fs::exists(staging));
}

TEST(OutputDir, DefaultIsProgramNameInCurrentDirectory) {
  EXPECT_EQ(default_output("/usr/bin/fio"), fs::current_path() / "fio_eziotrace");
}
