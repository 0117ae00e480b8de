// SPDX-License-Identifier: GPL-2.0-only
// One ring buffer per CPU (bpf/common.bpf.h, ring_entry; recorder/load/ring_group.h): a thread
// that moves to another CPU before each write (tests/programs/migrating_writer) has its records
// in every ring; the archive must still hold each of its calls once, in time order, with the
// rings and the losses per CPU said. Needs at least 2 online CPUs (the 2-core VM, the qemu
// guest's -smp 8).
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>

#include "recorder/load/ring_buffers.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::dump_archive;
using ezio::test::eziotrace;
using ezio::test::program;
using nlohmann::json;

namespace {

constexpr int kWrites = 3000;

struct Recording {
  fs::path data;
  int tid = 0, cpus_used = 0;
  ezio::test::Run run;
  json archive;
};

const Recording& recording() {
  static Recording r = [] {
    Recording r;
    fs::path dir = ezio::test::scratch_dir("per_cpu_rings");
    r.data = dir / "data.bin";
    r.run = eziotrace({"record", "-o", (dir / "trace").string(), "--", program("migrating_writer"),
                       r.data.string(), std::to_string(kWrites)});
    std::smatch m;
    if (std::regex_search(r.run.out, m, std::regex("tid=(\\d+) cpus=(\\d+)"))) {
      r.tid = std::stoi(m[1]);
      r.cpus_used = std::stoi(m[2]);
    }
    r.archive = dump_archive(dir / "trace" / "eziotrace.otf2");
    return r;
  }();
  return r;
}

}  // namespace

TEST(PerCpuRings, OneRingPerCpuWithinTheAskedMemory) {
  const auto& r = recording();
  ASSERT_EQ(r.run.status, 0) << r.run.err;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GE(cpus, 2) << "this test needs at least 2 online CPUs";
  EXPECT_EQ(r.cpus_used, cpus) << "the writer did not run on every CPU";
  // The default 32 MiB: one ring per CPU, none under 1 MiB, never more than asked in all.
  auto layout = ezio::recorder::ring_layout(32u << 20, static_cast<unsigned>(cpus));
  const json& p = r.archive["properties"];
  EXPECT_EQ(p["EZIOTRACE::RINGS"], layout.count);
  EXPECT_EQ(p["EZIOTRACE::RING_BYTES"], layout.ring_bytes);
  EXPECT_EQ(layout.count, std::min<unsigned>(static_cast<unsigned>(cpus), 32));
  EXPECT_LE(layout.count * layout.ring_bytes, 32u << 20);
  EXPECT_EQ(p["EZIOTRACE::RECORDING_PATH"], "in-process");
}

TEST(PerCpuRings, MigratingThreadHasEveryCallOnceInTimeOrder) {
  const auto& r = recording();
  ASSERT_EQ(r.run.status, 0) << r.run.err;
  ASSERT_NE(r.tid, 0) << r.run.out;
  EXPECT_EQ(r.archive["properties"]["EZIOTRACE::LOST::syscall"], 0);
  for (const auto& [name, v] : r.archive["properties"].items()) {
    EXPECT_FALSE(name.starts_with("EZIOTRACE::LOST_ON_CPU::")) << name << " = " << v;
  }
  ezio::test::CallsSeen seen =
      ezio::test::calls_seen(r.archive["locations"][std::to_string(r.tid)]["calls"]);
  EXPECT_EQ(seen.out_of_order, "") << "a call out of time order";
  EXPECT_EQ(seen.twice, "") << "a call twice";
  EXPECT_EQ(seen.writes, kWrites);
}
