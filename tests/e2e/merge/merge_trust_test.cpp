// SPDX-License-Identifier: GPL-2.0-only
// Through the real binary, EZTrace and BPF (root): `eziotrace merge` uses the EZTrace
// archive it is given and says what is wrong with a bad one; a run whose EZTrace wrote no trace
// keeps the kernel archive; EZTrace's own work (its `rm` child, /proc/self/cmdline, host lookups)
// never stays in a merged archive, even for processes whose trace is missing or that share a
// program name; processes EZTrace does not trace are reported, in the log and the archive.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "converters/merge/archive_model.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using ezio::test::run;

namespace {

using ezio::converters::Archive;

const ezio::otf2::Property* node_property(const Archive& a, const std::string& name) {
  for (const auto& p : a.defs.node_properties) {
    if (a.defs.str(p.name) == name) return &p;
  }
  ADD_FAILURE() << "no property " << name;
  return nullptr;
}

uint64_t number(const Archive& a, const std::string& name) {
  auto p = node_property(a, name);
  return p ? p->value.uint64 : UINT64_MAX;
}

std::string text(const Archive& a, const std::string& name) {
  auto p = node_property(a, name);
  return p && p->type == OTF2_TYPE_STRING ? a.defs.str(p->value.stringRef) : "?";
}

std::vector<std::string> group_names(const Archive& a) {
  std::vector<std::string> out;
  for (const auto& [ref, g] : a.defs.location_groups) out.push_back(a.defs.str(g.name));
  return out;
}

// EZTrace's own work, as the kernel sees it: files it reads at start-up and in its finalization.
void expect_no_eztrace_work(const Archive& a) {
  for (const auto& name : group_names(a)) {
    EXPECT_FALSE(name.starts_with("rm [")) << "EZTrace's rm child is in the archive: " << name;
  }
  static const std::regex own(
      R"(^(/proc/self/cmdline|/etc/hosts|/etc/host\.conf|/etc/resolv\.conf|/etc/nsswitch\.conf)$)");
  for (const auto& [ref, f] : a.defs.io_files) {
    std::string path = a.defs.str(f.name);
    EXPECT_FALSE(std::regex_match(path, own)) << "EZTrace's own file in the archive: " << path;
    EXPECT_EQ(path.find("_trace/"), std::string::npos) << "EZTrace's trace file: " << path;
    EXPECT_EQ(path.find("eziotrace-alignment"), std::string::npos) << "helper's file: " << path;
  }
}

// --- eziotrace merge: the arguments --------------------------------------------------------------

struct Recorded {
  fs::path dir, ez, kernel;
};

// `eziotrace record -- eztrace -t posixio io_child FILE`, EZTrace's trace in dir/ez.
const Recorded& recorded() {
  static Recorded r = [] {
    Recorded x;
    x.dir = ezio::test::scratch_dir("merge-trust-recorded");
    x.ez = x.dir / "ez";
    x.kernel = x.dir / "kernel";
    fs::create_directories(x.ez);
    auto rec = run({EZIO_BINARY, "record", "-o", x.kernel.string(), "--", "eztrace", "-t",
                    "posixio", program("io_child"), (x.dir / "child.dat").string()},
                   {"EZTRACE_TRACE_DIR=" + x.ez.string()});
    EXPECT_EQ(rec.status, 0) << rec.err;
    return x;
  }();
  return r;
}

void expect_merge_fails(const std::string& eztrace, int status, const std::string& says) {
  const Recorded& r = recorded();
  fs::path out = r.dir / "out";
  auto m = run({EZIO_BINARY, "merge", eztrace, r.kernel.string(), "-o", out.string()});
  EXPECT_EQ(m.status, status) << eztrace << ": " << m.err;
  EXPECT_NE(m.err.find(says), std::string::npos) << eztrace << ": " << m.err;
  EXPECT_FALSE(fs::exists(out)) << "something was left at " << out;
}

TEST(MergeArguments, TheEztraceArchiveGivenIsUsedAndChecked) {
  const Recorded& r = recorded();
  ASSERT_TRUE(fs::exists(r.ez / "io_child_trace/eztrace_log.otf2"));
  // The recorded place still holds the trace: none of these may fall back to it.
  expect_merge_fails((r.dir / "nonexistent").string(), 1, "no such file or directory");
  std::ofstream(r.dir / "empty.otf2").close();
  expect_merge_fails((r.dir / "empty.otf2").string(), 1, "empty file");
  {
    std::ofstream junk(r.dir / "junk.otf2", std::ios::binary);
    for (int i = 0; i < 4096; ++i) junk.put(static_cast<char>((i * 7919) & 0xff));
  }
  expect_merge_fails((r.dir / "junk.otf2").string(), 1, "not a readable EZTrace archive");
  fs::create_directories(r.dir / "nothing-here");
  expect_merge_fails((r.dir / "nothing-here").string(), 1, "holds no EZTrace trace");
  expect_merge_fails(r.kernel.string(), 2, "same archive");
  expect_merge_fails((r.kernel / "eziotrace.otf2").string(), 2, "same archive");

  // Moved elsewhere, the trace is found where it is given.
  fs::path moved = r.dir / "moved";
  fs::create_directories(moved);
  fs::copy(r.ez / "io_child_trace", moved / "io_child_trace", fs::copy_options::recursive);
  for (const std::string& given : {moved.string(), (moved / "io_child_trace").string(),
                                   (moved / "io_child_trace/eztrace_log.otf2").string()}) {
    fs::path out = r.dir / "merged";
    fs::remove_all(out);
    auto m = run({EZIO_BINARY, "merge", given, r.kernel.string(), "-o", out.string()});
    ASSERT_EQ(m.status, 0) << given << ": " << m.err;
    Archive a = ezio::converters::read_archive(out / "eziotrace.otf2");
    EXPECT_EQ(number(a, "EZIOTRACE::EZTRACE_PROCESSES"), 1u) << given;
    EXPECT_EQ(number(a, "EZIOTRACE::ALIGNMENT_VIOLATIONS"), 0u) << given;
    expect_no_eztrace_work(a);
  }
}

// --- eziotrace -- cmd
// -----------------------------------------------------------------------------

struct Merged {
  ezio::test::Run run;
  fs::path out;
  Archive archive;
};

Merged run_merged(const std::string& name, const std::vector<std::string>& command,
                  const std::vector<std::string>& options = {}) {
  Merged m;
  fs::path dir = ezio::test::scratch_dir(name);
  m.out = dir / "out";
  std::vector<std::string> args = {EZIO_BINARY, "-o", m.out.string()};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  m.run = run(args);
  if (fs::exists(m.out / "eziotrace.otf2")) {
    m.archive = ezio::converters::read_archive(m.out / "eziotrace.otf2");
  } else {
    ADD_FAILURE() << "no archive: " << m.run.err;
  }
  return m;
}

TEST(MergedRun, NoEztraceTraceKeepsTheKernelArchiveAndTheParts) {
  // dash ends with _exit: EZTrace never writes its trace. Its redirection is a call of its own
  // (its loader's, before the start gate, are not recorded: docs/merge.md, Start-up).
  Merged m = run_merged("merge-trust-sh-true", {"sh", "-c", ": </etc/passwd"}, {"--keep-parts"});
  EXPECT_EQ(m.run.status, 0) << m.run.err;
  EXPECT_NE(m.run.err.find("EZTrace wrote no trace"), std::string::npos) << m.run.err;
  EXPECT_TRUE(text(m.archive, "EZIOTRACE::USER_LEVEL").starts_with("missing"))
      << text(m.archive, "EZIOTRACE::USER_LEVEL");
  EXPECT_EQ(number(m.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 0u);
  EXPECT_EQ(number(m.archive, "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), 1u);
  EXPECT_FALSE(m.archive.events.empty());
  fs::path parts = m.out;
  parts += ".parts";
  EXPECT_TRUE(fs::exists(parts / "kernel/eziotrace.otf2")) << "--keep-parts not honoured";
  expect_no_eztrace_work(m.archive);

  // The application's status is the run's, with the archive.
  Merged b = run_merged("merge-trust-bash-exit", {"bash", "-c", "exit 3"});
  EXPECT_EQ(b.run.status, 3) << b.run.err;
  EXPECT_TRUE(fs::exists(b.out / "eziotrace.otf2"));
}

TEST(MergedRun, EztraceOwnWorkIsDroppedForEveryProcess) {
  // sh forks /bin/true and ends with _exit: its EZTrace (and its rm child) left no trace.
  Merged sh = run_merged("merge-trust-sh-bin-true", {"sh", "-c", "/bin/true; /bin/true"});
  EXPECT_EQ(sh.run.status, 0) << sh.run.err;
  EXPECT_EQ(number(sh.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 2u);
  EXPECT_GE(number(sh.archive, "EZIOTRACE::EZTRACE_OWN_IO_FILTERED"), 1u);
  expect_no_eztrace_work(sh.archive);

  // Four processes of one program name, each with its own trace.
  fs::path dir = ezio::test::scratch_dir("merge-trust-spawn-data");
  Merged sp =
      run_merged("merge-trust-spawn", {program("spawn_children"), "exec", "3", dir.string()});
  EXPECT_EQ(sp.run.status, 0) << sp.run.err;
  EXPECT_EQ(number(sp.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 4u) << sp.run.err;
  EXPECT_EQ(number(sp.archive, "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), 0u)
      << text(sp.archive, "EZIOTRACE::PIDS_WITHOUT_USER_TRACE");
  EXPECT_EQ(text(sp.archive, "EZIOTRACE::USER_LEVEL"), "complete");
  EXPECT_EQ(sp.run.err.find("EZTrace kept only one archive"), std::string::npos) << sp.run.err;
  expect_no_eztrace_work(sp.archive);
}

TEST(MergedRun, GitCommitLeavesNoEztraceWork) {
  ASSERT_EQ(run({"git", "--version"}).status, 0) << "git is missing (run scripts/setup.sh)";
  fs::path repo = ezio::test::scratch_dir("merge-trust-git-repo");
  ASSERT_EQ(run({"git", "-C", repo.string(), "init", "-q"}).status, 0);
  std::ofstream(repo / "a") << "a\n";
  ASSERT_EQ(run({"git", "-C", repo.string(), "add", "a"}).status, 0);
  Merged m = run_merged("merge-trust-git", {"git", "-C", repo.string(), "-c", "user.name=t", "-c",
                                            "user.email=t@t", "commit", "-qm", "x"});
  EXPECT_EQ(m.run.status, 0) << m.run.err;
  EXPECT_GE(number(m.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 1u);
  EXPECT_EQ(number(m.archive, "EZIOTRACE::ALIGNMENT_VIOLATIONS"), 0u);
  expect_no_eztrace_work(m.archive);
}

TEST(MergedRun, ForkedChildrenWithoutExecAreReported) {
  fs::path dir = ezio::test::scratch_dir("merge-trust-fork-data");
  Merged m = run_merged("merge-trust-fork", {program("spawn_children"), "fork", "2", dir.string()});
  EXPECT_EQ(m.run.status, 0) << m.run.err;
  std::set<std::string> children;
  std::regex child(R"(child=(\d+))");
  for (std::sregex_iterator it(m.run.out.begin(), m.run.out.end(), child), end; it != end; ++it) {
    children.insert((*it)[1]);
  }
  ASSERT_EQ(children.size(), 2u) << m.run.out;
  EXPECT_EQ(number(m.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 1u);
  EXPECT_EQ(number(m.archive, "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), 2u);
  std::string pids = text(m.archive, "EZIOTRACE::PIDS_WITHOUT_USER_TRACE");
  for (const auto& pid : children) {
    EXPECT_NE(pids.find(pid), std::string::npos) << pids;
    EXPECT_NE(m.run.err.find("[" + pid + "]: not traced by EZTrace"), std::string::npos)
        << m.run.err;
  }
  EXPECT_TRUE(text(m.archive, "EZIOTRACE::USER_LEVEL").starts_with("partial"));
}

}  // namespace

namespace {

// dd closes stdin and stdout at its end; EZTrace 2.0's close wrapper makes no system call for an fd
// it did not see opened. The merge says so instead of reporting two alignment violations.
TEST(MergedRun, EztraceClosesWithoutSyscallAreNotViolations) {
  fs::path dir = ezio::test::scratch_dir("merge-trust-dd-data");
  Merged m = run_merged("merge-trust-dd",
                        {"dd", "if=/dev/zero", "of=" + (dir / "f").string(), "bs=4k", "count=100"});
  EXPECT_EQ(m.run.status, 0) << m.run.err;
  EXPECT_EQ(number(m.archive, "EZIOTRACE::ALIGNMENT_VIOLATIONS"), 0u) << m.run.err;
  EXPECT_EQ(number(m.archive, "EZIOTRACE::EZTRACE_CLOSES_WITHOUT_SYSCALL"), 2u) << m.run.err;
  EXPECT_NE(m.run.err.find("made no system call"), std::string::npos) << m.run.err;
  // Every read and write of the copy, and the opens, were checked.
  EXPECT_GE(number(m.archive, "EZIOTRACE::ALIGNMENT_CHECKED_CALLS"), 200u);
}

}  // namespace
