// SPDX-License-Identifier: GPL-2.0-only
// The start gate (docs/merge.md, Start-up) through the real binary, EZTrace and BPF (root):
// `eziotrace -- prog` starts a dynamically linked program at once, held at the preload helper's
// gate while the kernel side loads; a statically linked one, which the helper cannot hold, waits
// before its exec as before; a shell that execs the program is held itself. In every case the
// program's own first I/O (its constructor's, then main's) is in the kernel archive. And which
// programs the gate can hold (recorder/session/start_gate.h).
#include "recorder/session/start_gate.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "converters/merge/archive_model.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;

namespace {

struct Recording {
  std::string log;
  std::set<std::string> kernel_files;  // IoFile names of the kernel archive
  std::string status;                  // its EZIOTRACE::STATUS
};

// `eziotrace -v --keep-parts -o <dir>/out -- command...`, what its kernel archive holds.
Recording record(const fs::path& dir, const std::vector<std::string>& command) {
  std::vector<std::string> args = {"-v", "--keep-parts", "-o", (dir / "out").string(), "--"};
  args.insert(args.end(), command.begin(), command.end());
  auto r = ezio::test::eziotrace(args);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  Recording out;
  out.log = r.out + r.err;
  auto kernel = ezio::converters::read_archive(dir / "out.parts" / "kernel" / "eziotrace.otf2");
  for (const auto& [ref, f] : kernel.defs.io_files)
    out.kernel_files.insert(kernel.defs.str(f.name));
  for (const auto& p : kernel.defs.node_properties) {
    if (kernel.defs.str(p.name) == "EZIOTRACE::STATUS" && p.type == OTF2_TYPE_STRING) {
      out.status = kernel.defs.str(p.value.stringRef);
    }
  }
  return out;
}

constexpr char kGated[] = "held at the start gate";
constexpr char kNotGated[] = "starts once the kernel side is loaded";

void expect_own_io(const Recording& r, const fs::path& dir) {
  EXPECT_TRUE(r.kernel_files.count((dir / "ctor.txt").string())) << "the constructor's open\n"
                                                                 << r.log;
  EXPECT_TRUE(r.kernel_files.count((dir / "main.txt").string())) << "main's open\n" << r.log;
  EXPECT_EQ(r.status, "complete");
}

TEST(StartGate, DynamicProgramIsHeldAtTheGateAndItsOwnIoRecorded) {
  fs::path dir = ezio::test::scratch_dir("start-gate-dynamic");
  Recording r = record(dir, {program("gate_probe"), dir.string()});
  EXPECT_NE(r.log.find(kGated), std::string::npos) << r.log;
  expect_own_io(r, dir);
}

TEST(StartGate, StaticProgramStartsAfterTheKernelSideAndIsRecordedCompletely) {
  ASSERT_TRUE(fs::exists(program("gate_probe_static")))
      << "gate_probe_static was not built: glibc's static libc (libc.a, libc6-dev) is missing";
  fs::path dir = ezio::test::scratch_dir("start-gate-static");
  Recording r = record(dir, {program("gate_probe_static"), dir.string()});
  EXPECT_NE(r.log.find(kNotGated), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("statically linked"), std::string::npos) << r.log;
  expect_own_io(r, dir);
}

TEST(StartGate, ShellThatExecsIsHeldItselfAndTheProgramRecordedCompletely) {
  fs::path dir = ezio::test::scratch_dir("start-gate-exec");
  Recording r =
      record(dir, {"sh", "-c", "exec \"$0\" \"$1\"", program("gate_probe"), dir.string()});
  EXPECT_NE(r.log.find(kGated), std::string::npos) << r.log;
  expect_own_io(r, dir);
}

TEST(StartGate, ShellThatExecsAStaticProgramIsRecordedCompletely) {
  ASSERT_TRUE(fs::exists(program("gate_probe_static")))
      << "gate_probe_static was not built: glibc's static libc (libc.a, libc6-dev) is missing";
  fs::path dir = ezio::test::scratch_dir("start-gate-exec-static");
  Recording r =
      record(dir, {"sh", "-c", "exec \"$0\" \"$1\"", program("gate_probe_static"), dir.string()});
  EXPECT_NE(r.log.find(kGated), std::string::npos) << r.log;
  expect_own_io(r, dir);
}

TEST(StartGate, ProgramEndingBeforeTheGateIsReportedAndTheRecorderGoesOn) {
  // A library constructor of the program ends it before glibc's start routine: the helper never
  // says it reached the gate, the gate is opened on a program that is gone.
  fs::path dir = ezio::test::scratch_dir("start-gate-never");
  fs::path out = dir / "out";
  auto r = ezio::test::run({EZIO_BINARY, "-v", "--keep-parts", "-o", out.string(), "--",
                            program("gate_probe_lib"), dir.string()},
                           {"GATE_PROBE_EXIT=7"});
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_NE(r.err.find(kGated), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did not reach eziotrace's start gate"), std::string::npos) << r.err;
  auto kernel = ezio::converters::read_archive(out.string() + ".parts/kernel/eziotrace.otf2");
  std::string status;
  for (const auto& p : kernel.defs.node_properties) {
    if (kernel.defs.str(p.name) == "EZIOTRACE::STATUS") status = kernel.defs.str(p.value.stringRef);
  }
  EXPECT_EQ(status, "start-missing");
  EXPECT_FALSE(fs::exists(dir / "ctor.txt")) << "the program's own code ran";
}

// --- which programs the gate can hold ------------------------------------------------------------

// A script in dir running `interpreter`, executable.
std::string script(const fs::path& dir, const std::string& name, const std::string& interpreter) {
  fs::path path = dir / name;
  std::ofstream(path) << "#!" << interpreter << " -e\necho hi\n";
  fs::permissions(path, fs::perms::owner_all);
  return path.string();
}

TEST(StartGate, HoldsDynamicProgramsAndScriptsOfThem) {
  fs::path dir = ezio::test::scratch_dir("start-gate-which");
  EXPECT_EQ(ezio::recorder::why_not_gated(program("gate_probe")), "");
  EXPECT_EQ(ezio::recorder::why_not_gated("sh"), "") << "looked up in PATH";
  EXPECT_EQ(ezio::recorder::why_not_gated(script(dir, "dynamic.sh", "/bin/sh")), "");
  EXPECT_EQ(
      ezio::recorder::why_not_gated(script(dir, "twice.sh", script(dir, "once.sh", "/bin/sh"))),
      "");
}

TEST(StartGate, DoesNotHoldWhatIgnoresThePreload) {
  ASSERT_TRUE(fs::exists(program("gate_probe_static")))
      << "gate_probe_static was not built: glibc's static libc (libc.a, libc6-dev) is missing";
  fs::path dir = ezio::test::scratch_dir("start-gate-which-not");
  auto why = [](const std::string& command) { return ezio::recorder::why_not_gated(command); };
  EXPECT_NE(why(program("gate_probe_static")).find("statically linked"), std::string::npos);
  EXPECT_NE(why(script(dir, "static.sh", program("gate_probe_static"))).find("statically linked"),
            std::string::npos)
      << "a script's interpreter is what runs";
  fs::path setuid = dir / "setuid_probe";
  fs::copy_file(program("gate_probe"), setuid);
  ASSERT_EQ(chmod(setuid.c_str(), 04755), 0);
  EXPECT_NE(why(setuid.string()).find("setuid"), std::string::npos);
  fs::path text = dir / "text";
  std::ofstream(text) << "not a program\n";
  fs::permissions(text, fs::perms::owner_all);
  EXPECT_NE(why(text.string()).find("not an ELF program"), std::string::npos);
  EXPECT_NE(why("no-such-command-anywhere").find("not found"), std::string::npos);
}

}  // namespace
