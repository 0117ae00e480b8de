// SPDX-License-Identifier: GPL-2.0-only
// The MPI module chosen for the application (docs/recording.md, "MPI programs"), under MPICH and
// Open MPI, and for a Python program with mpi4py: `-t posixio` alone gets the program's MPI module
// and mpiio, said once; an MPI module that is not the program's is refused before anything runs.
// And an application that aborts inside a collective write still leaves a readable archive that
// says what it lacks.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "mpiio_archive.h"
#include "mpiio_mpis.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::Mpi;
using ezio::test::MpiioArchive;

namespace {

class MpiChoice : public testing::TestWithParam<Mpi> {};

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::map<uint64_t, uint64_t> pids_of_ranks(const std::string& out, const std::string& word) {
  std::map<uint64_t, uint64_t> pids;
  std::regex line("rank=(\\d) pid=(\\d+) " + word);
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    pids[std::stoul((*it)[1])] = std::stoul((*it)[2]);
  }
  return pids;
}

TEST_P(MpiChoice, PosixioAloneGetsTheProgramsMpiModuleAndMpiio) {
  const Mpi& mpi = GetParam();
  fs::path dir = ezio::test::scratch_dir("mpiio-choice-" + mpi.name);
  std::vector<std::string> args = {"-t", "posixio", "-o", (dir / "out").string(), "--"};
  for (auto& w : mpi.command("mpiio_calls", {dir.string()})) args.push_back(w);
  auto r = ezio::test::eziotrace(args);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::string said =
      mpi.name == "mpich" ? "uses MPICH (libmpich.so.12" : "uses Open MPI (libmpi.so.40";
  EXPECT_EQ(occurrences(r.err, said), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, "tracing with the " + mpi.name + " EZTrace module and mpiio too"),
            1u)
      << r.err;
  auto pids = pids_of_ranks(r.out, "done");
  ASSERT_EQ(pids.size(), 2u) << r.out;
  MpiioArchive archive(dir / "out" / "eziotrace.otf2");
  // The ranks' EZTrace traces merged (the launcher has none: it is not an MPI process).
  EXPECT_EQ(archive.node_uint("EZIOTRACE::EZTRACE_PROCESSES"), 2u);
  for (auto [rank, pid] : pids) {
    size_t opens = 0;
    for (const auto& c : archive.calls(pid)) opens += c.name == "MPI_File_open";
    EXPECT_EQ(opens, 1u) << "rank " << rank;
  }
}

TEST_P(MpiChoice, AnotherMpisModuleIsRefusedBeforeAnythingRuns) {
  const Mpi& mpi = GetParam();
  std::string other = mpi.name == "mpich" ? "openmpi" : "mpich";
  fs::path dir = ezio::test::scratch_dir("mpiio-mismatch-" + mpi.name);
  std::vector<std::string> args = {"-t", other + ",posixio", "-o", (dir / "out").string(), "--"};
  for (auto& w : mpi.command("mpiio_calls", {dir.string()})) args.push_back(w);
  auto r = ezio::test::eziotrace(args);
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  std::string title = mpi.name == "mpich" ? "MPICH" : "Open MPI";
  EXPECT_NE(r.err.find("-t " + other + " is EZTrace's module for "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mpiio_calls_" + mpi.name + " uses " + title), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("trace with -t " + mpi.name), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("done"), std::string::npos) << "the program ran: " << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "eziotrace.otf2"));
}

// MPI_Abort from rank 1's error handler inside its MPI_File_write_all, while rank 0 is in its own
// (tests/programs/mpiio/mpiio_abort.c): the launcher kills the ranks before EZTrace's MPI_Finalize,
// where EZTrace 2.0 writes its whole MPI-mode archive, so no rank has a user-level trace. The
// archive is still written and readable, holds what the kernel saw of both ranks (the first
// collective write's system calls), and says why its user level is missing: its status names the
// abort; every analyzer opens it and says that status.
TEST_P(MpiChoice, AnAbortInsideACollectiveWriteLeavesAReadableArchiveSayingSo) {
  const Mpi& mpi = GetParam();
  fs::path dir = ezio::test::scratch_dir("mpiio-abort-" + mpi.name);
  fs::path out = dir / "out";
  std::vector<std::string> args = {"-t", mpi.name + ",mpiio,posixio", "-o", out.string(), "--"};
  for (auto& w : mpi.command("mpiio_abort", {dir.string()})) args.push_back(w);
  auto r = ezio::test::eziotrace(args);
  EXPECT_EQ(r.status, 7) << r.out << r.err;  // MPI_Abort's error code, as the launcher exits
  std::string notes;
  for (const char* rank : {"rank0.pid", "rank1.pid"}) notes += ezio::test::read_text(dir / rank);
  auto pids = pids_of_ranks(notes, "writing");
  ASSERT_EQ(pids.size(), 2u) << notes << r.out;
  auto p = ezio::test::run({"otf2-print", "-A", (out / "eziotrace.otf2").string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";
  MpiioArchive archive(out / "eziotrace.otf2");
  std::string level = archive.node_string("EZIOTRACE::USER_LEVEL");
  EXPECT_EQ(level,
            "missing: EZTrace wrote no trace, the archive holds the kernel layers only (the "
            "application ended before EZTrace's exit, where EZTrace writes its trace: "
            "EZIOTRACE::STATUS)");
  // The kernel layers are whole; the application's end is the launcher's status.
  const std::string status =
      "application-aborted: the application ended with exit status 7 before EZTrace's exit; the "
      "kernel layers are complete; EZTrace's user layer is lost (EZTrace writes its trace when "
      "the processes exit, in MPI_Finalize for MPI programs)";
  EXPECT_EQ(archive.node_string("EZIOTRACE::STATUS"), status);
  EXPECT_EQ(archive.node_string("EZIOTRACE::APPLICATION_END"), "exit status 7");
  EXPECT_NE(r.err.find("status: " + status), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("user level: " + level), std::string::npos) << r.err;
  std::string anchor = (out / "eziotrace.otf2").string();
  for (const char* analyzer :
       {"profile", "layers", "files", "latency", "collective", "datasets", "advise"}) {
    auto a = ezio::test::eziotrace({analyzer, "--json", anchor});
    ASSERT_EQ(a.status, 0) << analyzer << ": " << a.err;
    EXPECT_EQ(nlohmann::json::parse(a.out)["meta"]["status"], status) << analyzer;
    EXPECT_NE(a.err.find("the recording is " + status), std::string::npos) << analyzer << a.err;
  }
  auto page = ezio::test::eziotrace({"report", "-o", (dir / "r.html").string(), anchor});
  ASSERT_EQ(page.status, 0) << page.err;
  EXPECT_NE(ezio::test::read_text(dir / "r.html").find("application-aborted: the application"),
            std::string::npos);
  for (auto [rank, pid] : pids) {
    EXPECT_GE(archive.entered(pid, mpi.syscall_write), 1u) << "rank " << rank;
  }
}

// A Python program is not linked against MPI: under a launcher, mpi4py's MPI is chosen (Debian's
// python3-mpi4py is built against Open MPI), and its MPI-IO calls are recorded.
TEST(MpiChoicePython, Mpi4pyUnderTheLauncherGetsItsMpiModuleAndMpiio) {
  fs::path dir = ezio::test::scratch_dir("mpiio-choice-python");
  fs::path script = dir / "write.py";
  {
    std::ofstream py(script);
    py << "import os, sys\n"
          "from mpi4py import MPI\n"
          "c = MPI.COMM_WORLD\n"
          "f = MPI.File.Open(c, sys.argv[1] + '/py.dat', MPI.MODE_CREATE | MPI.MODE_WRONLY)\n"
          "f.Write_at_all(c.rank * 4096, bytearray(b'x' * 4096))\n"
          "f.Close()\n"
          "print(f'rank={c.rank} pid={os.getpid()} done', flush=True)\n";
  }
  auto r = ezio::test::eziotrace({"-t", "posixio", "-o", (dir / "out").string(), "--",
                                  "mpirun.openmpi", "--allow-run-as-root", "-np", "2",
                                  "/usr/bin/python3", script.string(), dir.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(occurrences(r.err, "uses Open MPI (libmpi.so.40 needed by "), 1u) << r.err;
  EXPECT_NE(r.err.find("mpi4py/MPI."), std::string::npos) << r.err;
  auto pids = pids_of_ranks(r.out, "done");
  ASSERT_EQ(pids.size(), 2u) << r.out;
  MpiioArchive archive(dir / "out" / "eziotrace.otf2");
  for (auto [rank, pid] : pids) {
    std::map<std::string, int> count;
    for (const auto& c : archive.calls(pid)) ++count[c.name];
    EXPECT_EQ(count,
              (std::map<std::string, int>{
                  {"MPI_File_open", 1}, {"MPI_File_write_at_all", 1}, {"MPI_File_close", 1}}))
        << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Mpis, MpiChoice, testing::ValuesIn(ezio::test::mpis()),
                         ezio::test::mpi_name);

}  // namespace
