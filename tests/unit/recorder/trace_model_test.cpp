// SPDX-License-Identifier: GPL-2.0-only
// Trace model 2 (docs/trace-model.md): the recorder writes fewer attribute values per call, and
// every reader (ours through common/otf2, python3-otf2 through tests/support/trace_model.py) gets
// from it the same fields as from model 1 (written here on request, KernelArchive::model1).
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/otf2/reader.h"
#include "recorder/archive/kernel_archive.h"
#include "run.h"

using namespace ezio::recorder;

namespace {

constexpr uint32_t kPid = 1000;

ezio_syscall_rec call(uint32_t nr, uint64_t t0, int64_t fd, uint64_t count, int64_t ret,
                      uint64_t id, int64_t offset = -1) {
  ezio_syscall_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_SYSCALL, EZIO_LAYER_SYSCALL, sizeof(r), kPid, kPid};
  r.call_id = id;
  r.t_enter = t0;
  r.t_exit = t0 + 100;
  r.fd = fd;
  r.count = count;
  r.ret = ret;
  r.offset = offset;
  r.nr = nr;
  return r;
}

ezio_vfs_rec vfs(uint64_t id, uint64_t t0, uint8_t op, int64_t ret, bool derived, uint64_t ino) {
  ezio_vfs_rec v{};
  v.h = {EZIO_RECORD_VERSION, EZIO_REC_VFS, EZIO_LAYER_VFS, sizeof(v), kPid, kPid};
  v.call_id = id;
  v.t_enter = t0 + 10;
  v.t_exit = t0 + 90;
  v.file_key = ino * 16;
  v.ino = ino;
  v.dev = (8u << 20) | 1;
  v.ret = ret;
  v.offset = 4096;
  v.op = op;
  v.flags = derived ? EZIO_VFSF_DERIVED : 0;
  std::strcpy(v.fstype, "ext4");
  return v;
}

template <typename T>
void add(RecordStore& s, T r) {
  s.add(&r, sizeof(r));
}

// Calls of every kind model 2 writes differently: a write and a read with their VFS event
// (exact, derived), a failed pwrite, an fsync and a sync_file_range, an open with its derived
// vfs_open, a VFS event on a file whose path is unknown, one outside any call, an FS event.
void fill(RecordStore& s) {
  ezio_file_rec f{};
  f.h = {EZIO_RECORD_VERSION, EZIO_REC_FILE, EZIO_LAYER_VFS, sizeof(f), kPid, kPid};
  f.file_key = 12 * 16;
  f.ino = 12;
  f.depth = 3;
  f.mount_depth = 3;
  std::strcpy(f.names[0], "f");
  std::strcpy(f.names[1], "data");
  std::strcpy(f.names[2], "/");
  add(s, f);
  ezio_open_rec o{};
  o.sc = call(SYS_openat, 1000, -100, 0, 3, 1);
  o.sc.h.kind = EZIO_REC_OPEN;
  o.sc.h.size = sizeof(o);
  o.open_flags = 0101;
  std::strcpy(o.path, "/data/f");
  add(s, o);
  add(s, vfs(1, 1000, EZIO_VFS_OPEN, 3, true, 12));
  add(s, call(SYS_write, 2000, 3, 10, 10, 2));
  add(s, vfs(2, 2000, EZIO_VFS_WRITE, 10, false, 12));
  ezio_fs_rec fs{};
  fs.h = {EZIO_RECORD_VERSION, EZIO_REC_FS, EZIO_LAYER_FS, sizeof(fs), kPid, kPid};
  fs.call_id = 2;
  fs.t_enter = fs.t_exit = 2050;
  fs.ino = 12;
  fs.bytes = 10;
  fs.op = EZIO_FS_TP_EXT4_DA_WRITE_END;
  fs.flags = EZIO_FSF_POINT;
  add(s, fs);
  add(s, call(SYS_read, 3000, 3, 100, 7, 3));
  add(s, vfs(3, 3000, EZIO_VFS_READ, 7, true, 12));
  add(s, call(SYS_pwrite64, 4000, 3, 100, -28, 4, 8192));
  add(s, vfs(4, 4000, EZIO_VFS_WRITE, -28, true, 12));
  add(s, call(SYS_fsync, 5000, 3, 0, 0, 5));
  add(s, call(SYS_sync_file_range, 6000, 3, 512, 0, 6, 0));
  add(s, call(SYS_read, 7000, 3, 50, 50, 7));
  add(s, vfs(7, 7000, EZIO_VFS_READ, 50, true, 99));  // no path record: unknown path
  add(s, vfs(0, 8000, EZIO_VFS_WRITE, 5, true, 12));  // outside any call
}

std::filesystem::path write(const std::string& name, bool model1) {
  auto dir = ezio::test::scratch_dir(name);
  RecordStore s;
  fill(s);
  RecordingInfo info;
  info.root_pid = kPid;
  info.command = {"/bin/app"};
  info.cwd = "/";
  info.start_monotonic_ns = 500;
  info.end_monotonic_ns = 100000;
  KernelArchive archive(dir, info);
  if (model1) archive.model1();
  archive.finish(s);
  return dir / "eziotrace.otf2";
}

// Each event of the location as "kind region: attribute=value ...", with names for refs.
std::vector<std::string> described(const ezio::otf2::Archive& a, uint64_t* values = nullptr) {
  std::vector<std::string> out;
  for (const auto& e : a.events.at(kPid)) {
    std::string line = std::string(ezio::otf2::event_kind_name(e.kind));
    if (e.kind == ezio::otf2::EventKind::Enter)
      line += " " + a.defs.str(a.defs.regions.at(e.ref).canonical);
    for (const auto& attr : e.attributes) {
      line += " " + a.defs.str(a.defs.attributes.at(attr.id).name) + "=";
      line += attr.type == OTF2_TYPE_STRING
                  ? a.defs.str(attr.value.stringRef)
                  : std::to_string(ezio::otf2::integer_value(attr.type, attr.value).value_or(-1));
      if (values) ++*values;
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST(TraceModel, Model2ReadsAsModel1InEveryField) {
  auto m1 = write("model1", true);
  auto m2 = write("model2", false);
  auto a1 = ezio::otf2::read_archive(m1);
  auto a2 = ezio::otf2::read_archive(m2);
  EXPECT_FALSE(a1.defs.node_property("EZIOTRACE::TRACE_MODEL").has_value());
  EXPECT_EQ(a2.defs.node_property("EZIOTRACE::TRACE_MODEL"), 2u);
  auto d1 = described(a1);
  EXPECT_EQ(described(a2), d1);
  // The fields model 2 moves, as model 1 has them.
  auto has = [&](std::string_view what) {
    for (const auto& l : d1)
      if (l.find(what) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("syscall:write syscall.fd=3 syscall.bytes=10 syscall.result=10 call.id=2"));
  EXPECT_TRUE(has("syscall.offset=8192 syscall.result=-28 call.id=4"));
  EXPECT_TRUE(has("syscall:sync_file_range syscall.fd=3 syscall.bytes=512"));
  EXPECT_TRUE(has("vfs.path=/data/f vfs.mount="));
  EXPECT_TRUE(has("vfs.offset=4096 vfs.result=7 vfs.derived=1"));
  EXPECT_TRUE(has("vfs.fstype=ext4 vfs.offset=4096 vfs.result=50 vfs.derived=1"));
  EXPECT_TRUE(has("vfs.result=10 vfs.derived=0"));
}

TEST(TraceModel, Model2WritesFewerValues) {
  uint64_t v1 = 0, v2 = 0;
  described(ezio::otf2::read_archive(write("model1_raw", true), true), &v1);
  described(ezio::otf2::read_archive(write("model2_raw", false), true), &v2);
  EXPECT_GT(v1, 0u);
  EXPECT_LT(v2 * 3, v1 * 2);  // fewer than two thirds
}

TEST(TraceModel, PythonReaderGetsTheSameFields) {
  auto j1 = ezio::test::dump_archive(write("model1_py", true));
  auto j2 = ezio::test::dump_archive(write("model2_py", false));
  ASSERT_FALSE(j1.is_null());
  ASSERT_FALSE(j2.is_null());
  EXPECT_EQ(j2["locations"], j1["locations"]);
  EXPECT_EQ(j2["vfs_calls"], j1["vfs_calls"]);
  EXPECT_EQ(j2["files"], j1["files"]);
  EXPECT_EQ(j2["nesting"], j1["nesting"]);
}

// merge-hosts links model 2 parts' event files as they are (docs/cluster.md, assembly): their
// files' properties and derived regions must reach the job archive, or its readers would get
// model 2's calls without their paths and devices. Both ways of merging read as model 1 does.
TEST(TraceModel, MergedHostsKeepModel2Fields) {
  auto expected = described(ezio::otf2::read_archive(write("hosts_model1", true)));
  auto a = write("hosts_a", false).parent_path(), b = write("hosts_b", false).parent_path();
  // Two tasks of one host, b's clock measured against a's (docs/cluster.md, clock files).
  std::ofstream(b / "eziotrace-clock.json")
      << R"({"reference":"localhost","host":"localhost",)"
         R"("start":{"offset_ns":0,"error_ns":1000,"at_ns":500,"rounds":200},)"
         R"("end":{"offset_ns":0,"error_ns":1000,"at_ns":100000,"rounds":200}})";
  for (bool rewrite : {false, true}) {
    auto out = ezio::test::scratch_dir(rewrite ? "hosts_rewritten" : "hosts_assembled");
    std::vector<std::string> args{"merge-hosts", "-v", "--no-check", a, b, "-o", out / "job"};
    if (rewrite) args.push_back("--rewrite-events");
    ezio::test::Run r = ezio::test::eziotrace(args);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    if (!rewrite) {
      EXPECT_NE(r.err.find("assembled"), std::string::npos) << r.err;
    }
    auto job = ezio::otf2::read_archive(out / "job" / "eziotrace.otf2");
    size_t parts = 0;
    for (const auto& [loc, events] : job.events) {
      if (events.empty() || (loc & 0xfffffffffffULL) != kPid) continue;
      ++parts;
      ezio::otf2::Archive one;
      one.defs = job.defs;
      one.events[kPid] = events;
      EXPECT_EQ(described(one), expected) << "location " << loc << (rewrite ? " rewritten" : "");
    }
    EXPECT_EQ(parts, 2u) << (rewrite ? "rewritten" : "assembled");
  }
}
