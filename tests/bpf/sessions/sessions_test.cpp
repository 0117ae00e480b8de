// SPDX-License-Identifier: GPL-2.0-only
// Recording sessions on one set of loaded programs (recorder/load/kernel_programs.h), real BPF:
// each session's ring holds its own processes' events only, one session's full ring costs the
// other nothing, and a closed session's slot is reused without its leftovers. Root.
#include <bpf/bpf.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "loop_fs.h"
#include "recorder/core/recording_info.h"
#include "recorder/decode/record_store.h"
#include "recorder/load/kernel_programs.h"
#include "recorder/load/ring_group.h"
#include "recorder/load/ring_reader.h"
#include "recorder/session/launcher.h"

namespace ezio::recorder {
namespace {

// The loaded programs, once for the whole test program: loading them is what the sessions save.
KernelPrograms& programs() {
  static std::unique_ptr<KernelPrograms> p = load_kernel_programs(all_layers(), true);
  return *p;
}

// One session with its ring read into a store.
class Session {
 public:
  explicit Session(uint64_t ring_bytes) {
    KernelPrograms::Session s = programs().open_session(ring_bytes);
    slot_ = s.slot;
    ring_bytes_ = s.ring_bytes;
    ring_fd_ = s.rings.front().get();
    reader_ = std::make_unique<RingGroup>(std::move(s.rings), s.ring_bytes, store_);
  }
  ~Session() {
    if (open_) programs().close_session(slot_);
  }
  void close() {
    programs().close_session(slot_);
    open_ = false;
  }
  unsigned slot() const { return slot_; }
  RecordStore& store() { return store_; }
  RingGroup& reader() { return *reader_; }
  int ring_fd() const { return ring_fd_; }
  // Starts argv stopped before its exec, traced by this session, and lets it go.
  std::unique_ptr<Launcher> launch(const std::vector<std::string>& argv) {
    auto app = std::make_unique<Launcher>(argv, current_environment(), target_user());
    programs().trace_process(slot_, app->pid());
    app->release();
    return app;
  }
  SessionTotals totals() const { return programs().totals(slot_); }
  uint64_t ring_bytes() const { return ring_bytes_; }

 private:
  unsigned slot_ = 0;
  uint64_t ring_bytes_ = 0;
  bool open_ = true;
  RecordStore store_;
  std::unique_ptr<RingGroup> reader_;
  int ring_fd_ = -1;  // the one ring's (open_session), owned by reader_
};

// Runs until every app ended, draining the rings of `drained` meanwhile, then drains every ring of
// `all` once more. Fails unless every app exited with status 0.
void run_to_end(const std::vector<Launcher*>& apps, const std::vector<Session*>& drained,
                const std::vector<Session*>& all) {
  std::vector<bool> ended(apps.size());
  for (size_t left = apps.size(); left > 0;) {
    for (size_t i = 0; i < apps.size(); ++i) {
      if (!ended[i] && apps[i]->poll_exit()) {
        ended[i] = true;
        --left;
      }
    }
    for (Session* s : drained) s->reader().drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (Session* s : all) s->reader().drain();
  for (Launcher* a : apps) EXPECT_EQ(a->how_it_ended(), "exit status 0");
}

// The processes of the session's tree, as its records tell: the root and every fork's child.
std::set<uint32_t> tree(const RecordStore& st, pid_t root) {
  std::set<uint32_t> pids{static_cast<uint32_t>(root)};
  for (const auto& p : st.procs()) {
    if (p.kind == EZIO_REC_FORK) pids.insert(p.pid);
  }
  return pids;
}

// Every process any record of the store names.
std::set<uint32_t> named(const RecordStore& st) {
  std::set<uint32_t> pids;
  for (const auto& r : st.syscalls()) pids.insert(r.h.pid);
  for (const auto& r : st.opens()) pids.insert(r.sc.h.pid);
  for (const auto& r : st.procs()) pids.insert(r.pid);
  for (const auto& r : st.vfs()) pids.insert(r.h.pid);
  for (const auto& r : st.fs()) pids.insert(r.h.pid);
  for (const auto& r : st.files()) pids.insert(r.h.pid);
  for (const auto& r : st.block_requests()) pids.insert(r.h.pid);
  for (const auto& r : st.pagecache()) pids.insert(r.h.pid);
  return pids;
}

std::set<std::string> opened(const RecordStore& st) {
  std::set<std::string> paths;
  for (const auto& o : st.opens()) paths.insert(o.path);
  return paths;
}

std::set<std::string> disks(const RecordStore& st) {
  std::set<std::string> out;
  for (const auto& r : st.block_requests()) out.insert(r.disk);
  return out;
}

// Writes two files on fs, direct and through the page cache with an fsync, in two dd processes.
std::vector<std::string> writer(const test::LoopFs& fs, const std::string& name) {
  std::string dir = fs.mount_point().string();
  return {"/bin/sh", "-c",
          "dd if=/dev/zero of=" + dir + "/" + name + "1 bs=64k count=32 oflag=direct status=none" +
              " && dd if=/dev/zero of=" + dir + "/" + name + "2 bs=64k count=32 conv=fsync" +
              " status=none"};
}

TEST(Sessions, EachRingHoldsItsOwnProcessesPathsAndRequests) {
  test::LoopFs fa("ext4"), fb("ext4");
  Session a(1 << 20), b(4 << 20);  // ring sizes may differ between sessions
  ASSERT_NE(a.slot(), b.slot());
  auto app_a = a.launch(writer(fa, "a"));
  auto app_b = b.launch(writer(fb, "b"));
  run_to_end({app_a.get(), app_b.get()}, {&a, &b}, {&a, &b});

  std::set<uint32_t> tree_a = tree(a.store(), app_a->pid()), tree_b = tree(b.store(), app_b->pid());
  EXPECT_GE(tree_a.size(), 3u) << "sh and its two dd";
  EXPECT_GE(tree_b.size(), 3u);
  for (uint32_t pid : named(a.store())) EXPECT_TRUE(tree_a.contains(pid)) << pid;
  for (uint32_t pid : named(b.store())) EXPECT_TRUE(tree_b.contains(pid)) << pid;
  for (uint32_t pid : tree_a) EXPECT_FALSE(tree_b.contains(pid)) << pid;

  std::string a1 = (fa / "a1").string(), b1 = (fb / "b1").string();
  EXPECT_TRUE(opened(a.store()).contains(a1));
  EXPECT_FALSE(opened(a.store()).contains(b1));
  EXPECT_TRUE(opened(b.store()).contains(b1));
  EXPECT_FALSE(opened(b.store()).contains(a1));

  // Their own reads of programs and libraries may reach the system disk too.
  EXPECT_TRUE(disks(a.store()).contains(fa.device()));
  EXPECT_FALSE(disks(a.store()).contains(fb.device()));
  EXPECT_TRUE(disks(b.store()).contains(fb.device()));
  EXPECT_FALSE(disks(b.store()).contains(fa.device()));
  SessionTotals ta = a.totals(), tb = b.totals();
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    EXPECT_EQ(ta.lost[l], 0u) << layer_name(l);
    EXPECT_EQ(tb.lost[l], 0u) << layer_name(l);
  }
  EXPECT_FALSE(ta.devices.used.empty());
  for (uint32_t dev : ta.devices.used) EXPECT_FALSE(tb.devices.used.contains(dev)) << dev;
}

TEST(Sessions, AFullRingCountsItsOwnDropsAndCostsTheOtherNothing) {
  constexpr int kStorm = 100000, kCalm = 3000;
  Session storm(4096), calm(8 << 20);  // the storm's ring is never drained while it runs
  auto app_storm = storm.launch(
      {"/bin/sh", "-c",
       "exec dd if=/dev/zero of=/dev/null bs=1 count=" + std::to_string(kStorm) + " status=none"});
  auto app_calm = calm.launch(
      {"/bin/sh", "-c",
       "exec dd if=/dev/zero of=/dev/null bs=1 count=" + std::to_string(kCalm) + " status=none"});
  run_to_end({app_storm.get(), app_calm.get()}, {&calm}, {&storm, &calm});

  SessionTotals ts = storm.totals(), tc = calm.totals();
  EXPECT_GT(ts.lost[EZIO_LAYER_SYSCALL], 0u);
  // Every call of the storm was either received or counted lost: nothing vanished.
  EXPECT_GE(storm.store().received()[EZIO_LAYER_SYSCALL] + ts.lost[EZIO_LAYER_SYSCALL],
            2u * kStorm);
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) EXPECT_EQ(tc.lost[l], 0u) << layer_name(l);
  int writes = 0;
  for (const auto& r : calm.store().syscalls()) writes += r.nr == SYS_write && r.fd == 1;
  EXPECT_EQ(writes, kCalm);
}

TEST(Sessions, AClosedSessionsSlotIsReusedWithoutItsLeftovers) {
  auto first = std::make_unique<Session>(1 << 20);
  unsigned slot = first->slot();
  unsigned open_before = programs().sessions();
  // One process (no fork to race with the counts below), still doing I/O after its session
  // closed.
  auto old = first->launch(
      {"/usr/bin/python3", "-c", "import time\ntime.sleep(1)\nopen('/etc/hostname').read()"});
  while (first->store().procs().empty()) first->reader().poll(10);  // its exec
  EXPECT_EQ(programs().traced_processes(slot), 1u);
  size_t traced_before = programs().traced_entries();
  first->close();
  EXPECT_EQ(programs().traced_entries(), traced_before - 1);
  EXPECT_EQ(programs().sessions(), open_before - 1);

  Session second(1 << 20);
  EXPECT_EQ(second.slot(), slot);
  EXPECT_EQ(programs().traced_processes(slot), 0u);
  auto fresh = second.launch({"/bin/sh", "-c", "exec cat /etc/hostname >/dev/null"});
  run_to_end({old.get(), fresh.get()}, {&second}, {&second});
  EXPECT_EQ(named(second.store()), std::set<uint32_t>{static_cast<uint32_t>(fresh->pid())});
  EXPECT_FALSE(second.store().syscalls().empty());
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    EXPECT_EQ(second.totals().lost[l], 0u) << layer_name(l);
  }
}

// Once its end (quiesce_session) returns, nothing more is written for a session whose process
// still writes as fast as it can: no record enters its ring, no loss is counted, and no program
// stays in the slot's gate, through the paths of a record written, of a full ring (a ring of one
// page, never drained while the process runs) and of a fork.
TEST(Sessions, AnEndedSessionGetsNothingMoreAndLeavesNoProgramInFlight) {
  Session s(4096);
  auto app = s.launch({"/bin/sh", "-c",
                       "/bin/true; exec dd if=/dev/zero of=/dev/null bs=1 count=2000000 "
                       "status=none"});
  // Running, and losing records: the ring is full.
  while (s.totals().lost[EZIO_LAYER_SYSCALL] == 0) {
    ASSERT_FALSE(app->poll_exit()) << "dd ended before the session did";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  programs().quiesce_session(s.slot());
  EXPECT_EQ(programs().programs_in_flight(s.slot()), 0u);
  SessionTotals at_end = s.totals();
  s.reader().drain();
  auto received = s.store().received();
  ASSERT_GT(received[EZIO_LAYER_SYSCALL], 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_FALSE(app->poll_exit()) << "dd ended too soon to show anything";
  s.reader().drain();
  EXPECT_EQ(s.store().received(), received);
  EXPECT_EQ(s.totals().lost, at_end.lost);
  EXPECT_EQ(programs().programs_in_flight(s.slot()), 0u);
  while (!app->poll_exit()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// A process another session records stays that session's: a session claims untraced processes
// only (a recorded eziotrace's child inherits its recorder's session).
TEST(Sessions, ASessionClaimsOnlyUntracedProcesses) {
  Session a(1 << 20), b(1 << 20);
  // Held before its exec while b tries: released at once, it could end before b's attempt.
  auto app = std::make_unique<Launcher>(
      std::vector<std::string>{"/bin/sh", "-c", "exec cat /etc/hostname >/dev/null"},
      current_environment(), target_user());
  programs().trace_process(a.slot(), app->pid());
  EXPECT_THROW(programs().trace_process(b.slot(), app->pid()), Error);
  EXPECT_EQ(programs().traced_processes(b.slot()), 0u);
  app->release();
  run_to_end({app.get()}, {&a, &b}, {&a, &b});
  EXPECT_TRUE(named(a.store()).contains(static_cast<uint32_t>(app->pid())));
  EXPECT_TRUE(b.store().procs().empty());
  EXPECT_TRUE(b.store().syscalls().empty());
}

// Two sessions at once on the same programs, one asking for the syscall layer only: it gets no
// record of the other layers, the other session gets them all.
TEST(Sessions, EachSessionRecordsTheLayersItAskedFor) {
  test::LoopFs fa("ext4"), fb("ext4");
  Session few(4 << 20), all(4 << 20);
  LayerSet syscall_only{};
  syscall_only[EZIO_LAYER_SYSCALL] = syscall_only[EZIO_LAYER_PROCESS] = true;
  programs().set_layers(few.slot(), syscall_only);
  auto app_few = few.launch(writer(fa, "a"));
  auto app_all = all.launch(writer(fb, "b"));
  run_to_end({app_few.get(), app_all.get()}, {&few, &all}, {&few, &all});

  const RecordStore& f = few.store();
  EXPECT_FALSE(f.syscalls().empty());
  EXPECT_TRUE(opened(f).contains((fa / "a1").string()));
  EXPECT_FALSE(f.procs().empty());
  EXPECT_TRUE(f.vfs().empty());
  EXPECT_TRUE(f.fs().empty());
  EXPECT_TRUE(f.pagecache().empty());
  EXPECT_TRUE(f.block_requests().empty());
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) EXPECT_EQ(few.totals().lost[l], 0u);

  const RecordStore& a = all.store();
  EXPECT_FALSE(a.syscalls().empty());
  EXPECT_FALSE(a.vfs().empty());
  EXPECT_FALSE(a.pagecache().empty());
  EXPECT_TRUE(disks(a).contains(fb.device()));
}

// The kernel's dev_t (MAJOR << 20 | MINOR) of a block device named in /sys/block.
uint32_t kernel_dev(const std::string& name) {
  unsigned major = 0, minor = 0;
  std::string text = test::must_run({"cat", "/sys/block/" + name + "/dev"});
  EXPECT_EQ(std::sscanf(text.c_str(), "%u:%u", &major, &minor), 2) << text;
  return major << 20 | minor;
}

uint64_t unattributed_requests(const Session& s, uint32_t dev) {
  auto un = s.totals().devices.unattributed;
  auto it = un.find(dev);
  return it == un.end() ? 0 : it->second.requests;
}

// The table of unattributed requests lives as long as the programs (eziotraced's, many sessions):
// each session counts those completed while it is open, not those of the sessions before it.
TEST(Sessions, EachSessionCountsTheUnattributedRequestsOfItsOwnTimeOnly) {
  test::LoopFs fs("ext4-nojournal");
  uint32_t dev = kernel_dev(fs.device());
  // Written by no session's process, and what it left dirty too: nothing more comes later.
  std::string dd = "dd if=/dev/zero of=" + (fs / "other").string() +
                   " bs=64k count=8 conv=fsync status=none && sync -f " + fs.mount_point().string();
  auto first = std::make_unique<Session>(1 << 20);
  test::must_run({"/bin/sh", "-c", dd});
  EXPECT_GT(unattributed_requests(*first, dev), 0u);
  first->close();
  Session second(1 << 20), third(1 << 20);
  EXPECT_EQ(unattributed_requests(second, dev), 0u);
  test::must_run({"/bin/sh", "-c", dd});
  uint64_t during = unattributed_requests(second, dev);
  EXPECT_GT(during, 0u);
  EXPECT_EQ(unattributed_requests(third, dev), during);
  // Both read the one table, each its window of it (what merge-hosts joins, docs/cluster.md).
  UnattributedWindow w2 = second.totals().devices.window, w3 = third.totals().devices.window;
  EXPECT_NE(w2.table, 0u);
  EXPECT_EQ(w2.table, w3.table);
  EXPECT_EQ(w2.end.at(dev).requests - w2.start.at(dev).requests, during);
  EXPECT_GE(w3.start.at(dev).requests, w2.start.at(dev).requests);
}

// The programs load as two halves at once, each half an object of its own that takes the tables of
// the programs' owner (recorder/load/split_load.h): every program must use that one set of tables
// (rings, traced table, global variables), or a half's records would go where no session reads.
TEST(Sessions, AllLoadedProgramsShareOneSetOfTables) {
  std::map<std::string, std::set<uint32_t>> table_ids;  // by table name
  std::set<std::string> names;
  for (const auto& [name, fd] : programs().loaded_programs()) {
    EXPECT_TRUE(names.insert(name).second) << name << " loaded twice";
    std::vector<uint32_t> ids(64);
    bpf_prog_info info{};
    info.nr_map_ids = ids.size();
    info.map_ids = reinterpret_cast<uint64_t>(ids.data());
    uint32_t len = sizeof(info);
    ASSERT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0) << name;
    ASSERT_LE(info.nr_map_ids, ids.size()) << name;
    for (uint32_t i = 0; i < info.nr_map_ids; ++i) {
      UniqueFd map(bpf_map_get_fd_by_id(ids[i]));
      ASSERT_TRUE(map) << name << ": table " << ids[i];
      bpf_map_info map_info{};
      uint32_t map_len = sizeof(map_info);
      ASSERT_EQ(bpf_obj_get_info_by_fd(map.get(), &map_info, &map_len), 0);
      table_ids[map_info.name].insert(ids[i]);
    }
  }
  // The syscall and process layers' programs at least, whatever this kernel's hooks.
  EXPECT_TRUE(names.contains("ezio_sys_enter") && names.contains("ezio_sys_exit"));
  EXPECT_TRUE(names.contains("ezio_fork") && names.contains("ezio_exec"));
  EXPECT_TRUE(table_ids.contains("rings") && table_ids.contains("traced"));
  for (const auto& [table, ids] : table_ids) EXPECT_EQ(ids.size(), 1u) << table;
}

// What eziotraced's client does: it holds its ring's fd, and no privilege. The exit status of the
// reading child says what it found: 0 its records, 1 none, 2 bpf() allowed after all (not a test
// of anything), 3 the reader failed.
int read_as_nobody(int ring_fd, uint64_t ring_bytes, pid_t traced) {
  if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return 4;
  union bpf_attr attr {};
  if (syscall(SYS_bpf, BPF_MAP_GET_FD_BY_ID, &attr, sizeof(attr)) >= 0 || errno != EPERM) return 2;
  try {
    RecordStore store;
    RingReader reader(UniqueFd(dup(ring_fd)), ring_bytes, store);
    reader.drain();
    for (const auto& p : store.procs()) {
      if (p.kind == EZIO_REC_EXEC && p.pid == static_cast<uint32_t>(traced)) return 0;
    }
    return 1;
  } catch (const std::exception&) {
    return 3;
  }
}

TEST(Sessions, AnUnprivilegedProcessReadsItsRingWithTheFdAlone) {
  Session s(1 << 20);
  auto app = s.launch({"/bin/sh", "-c", "exec cat /etc/hostname >/dev/null"});
  run_to_end({app.get()}, {}, {});  // nothing drained: the records wait in the ring
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) _exit(read_as_nobody(s.ring_fd(), s.ring_bytes(), app->pid()));
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ezio::recorder
