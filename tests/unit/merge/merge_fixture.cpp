// SPDX-License-Identifier: GPL-2.0-only
#include "merge_fixture.h"

#include <gtest/gtest.h>

#include <regex>

#include "io_threads.h"
#include "run.h"

namespace ezio::test {

Fixture trace_io_threads(const std::string& name) {
  Fixture x;
  x.dir = scratch_dir(name);
  setenv("EZIOTRACE_PRELOAD_HELPER", EZIO_PRELOAD_HELPER, 1);
  x.setup = converters::prepare_eztrace({"posixio"}, x.dir / "work");
  ezio::test::Run r =
      run({program("io_threads"), x.dir.string(), program("io_child")}, x.setup.env);
  EXPECT_EQ(r.status, IO_THREADS_EXIT_STATUS) << r.err;
  x.app_out = r.out;
  std::vector<std::string> warnings;
  converters::EztraceInputs loaded = converters::load_eztrace_inputs(x.setup.sidecar_dir, warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_TRUE(loaded.unreadable.empty());
  x.inputs = std::move(loaded.traces);
  return x;
}

const Fixture& traced_run() {
  static Fixture f = trace_io_threads("merge_run");
  return f;
}

const MpiFixture& mpi_traced_run() {
  static MpiFixture f = [] {
    MpiFixture x;
    x.dir = scratch_dir("merge_mpi_run");
    if (!std::filesystem::exists(program("mpi_io"))) {
      ADD_FAILURE() << "mpi_io was not built: MPICH is missing (run scripts/setup.sh)";
      return x;
    }
    setenv("EZIOTRACE_PRELOAD_HELPER", EZIO_PRELOAD_HELPER, 1);
    x.setup = converters::prepare_eztrace({"mpich", "posixio"}, x.dir / "work");
    std::vector<std::string> env;
    auto cmd = converters::eztrace_command(
        x.setup, {"mpirun.mpich", "-np", "2", program("mpi_io"), x.dir.string()}, env);
    // The launcher gets EZTrace's libraries through -genv only
    // (converters/eztrace/mpi_launcher.cpp).
    EXPECT_EQ(cmd[1], "-genv");
    for (const auto& e : env) EXPECT_FALSE(e.starts_with("LD_PRELOAD=")) << e;
    cmd.insert(cmd.begin(), {"timeout", "120"});
    ezio::test::Run r = run(cmd, env);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    x.app_out = r.out;
    std::regex line(R"(rank=(\d) pid=(\d+) token=42)");
    for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
      x.pid_of_rank[std::stoi((*it)[1])] = std::stoul((*it)[2]);
    }
    std::vector<std::string> warnings;
    x.inputs = converters::load_eztrace_inputs(x.setup.sidecar_dir, warnings).traces;
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    return x;
  }();
  return f;
}

std::string describe(const converters::Definitions& d, const converters::Event& e) {
  using converters::EventKind;
  if (e.kind == EventKind::Enter || e.kind == EventKind::Leave) {
    return d.regions.count(e.ref) ? d.str(d.regions.at(e.ref).name) : "?";
  }
  return "";
}

Merged merge_with_synthetic(const std::string& name, int64_t shift_ns, const Fixture& f,
                            uint64_t lost_syscalls) {
  auto dir = scratch_dir(name);
  auto kernel_inputs = f.inputs;
  Merged m;
  m.counts = write_synthetic_kernel(kernel_inputs, dir / "kernel", lost_syscalls);
  auto inputs = f.inputs;
  for (auto& in : inputs) in.process.first_timestamp += shift_ns;
  m.report = converters::merge_archives({inputs, {}}, dir / "kernel/eziotrace.otf2", dir / "merged",
                                        {f.setup.sidecar_dir, f.setup.trace_dir});
  m.anchor = dir / "merged/eziotrace.otf2";
  m.archive = converters::read_archive(m.anchor);
  return m;
}

const converters::CommDef* comm_named(const converters::Definitions& d, const std::string& name) {
  for (const auto& c : d.comms) {
    if (d.str(c.name) == name) return &c;
  }
  return nullptr;
}

}  // namespace ezio::test
