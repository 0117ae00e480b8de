// SPDX-License-Identifier: GPL-2.0-only
// End to end: `eziotrace --keep-parts -- io_threads DIR io_child`
// through the real binary, real EZTrace and real BPF (root). One recording; every expected value
// is derived from what the programs do (io_threads.h), never copied from an output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <map>
#include <regex>
#include <set>

#include "io_threads.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using ezio::test::run;
using nlohmann::json;

namespace {

// --- Reading archives -----------------------------------------------------------------------

// All events of an archive per location, through python3-otf2 (tests/support/otf2_dump.py
// --events).
struct Dump {
  ezio::test::Run reader;
  json archive;
};

Dump dump_events(const fs::path& anchor) {
  Dump d;
  d.reader =
      run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py", "--events", anchor.string()});
  if (d.reader.status == 0) d.archive = json::parse(d.reader.out);
  return d;
}

// One event of EZTrace's own archive as otf2-print shows it (python3-otf2 rejects EZTrace's
// archive: duplicate definitions).
struct EzEvent {
  std::string kind;    // otf2-print's name: ENTER, IO_OPERATION_BEGIN, ...
  std::string region;  // ENTER/LEAVE only
  uint64_t time = 0;
  bool operator==(const EzEvent& o) const { return kind == o.kind && region == o.region; }
};
using EzTrace = std::map<uint64_t, std::vector<EzEvent>>;  // EZTrace location id -> events

EzTrace read_with_otf2_print(const fs::path& anchor) {
  auto p = run({"otf2-print", anchor.string()});
  EzTrace t;
  if (p.status != 0) {
    ADD_FAILURE() << "otf2-print rejects " << anchor << ": " << p.err;
    return t;
  }
  static const std::regex line(R"(^([A-Z_]+) +(\d+) +(\d+) +(.*)$)");
  static const std::regex region(R"re(Region: "([^"]*)")re");
  std::istringstream in(p.out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m, r;
    if (!std::regex_match(l, m, line)) continue;
    EzEvent e{m[1], "", std::stoull(m[3])};
    if ((e.kind == "ENTER" || e.kind == "LEAVE") && std::regex_search(l, r, region))
      e.region = r[1];
    t[std::stoull(m[2])].push_back(e);
  }
  return t;
}

// python3-otf2's event class name (IoOperationBegin) as otf2-print names it (IO_OPERATION_BEGIN).
std::string print_name(const std::string& kind) {
  std::string out;
  for (size_t i = 0; i < kind.size(); ++i) {
    if (i > 0 && std::isupper(static_cast<unsigned char>(kind[i]))) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(kind[i])));
  }
  return out;
}

bool kernel_region(const std::string& canonical) {
  static const std::set<std::string> layers{"syscall", "vfs", "fs", "pagecache", "block"};
  auto colon = canonical.find(':');
  return colon != std::string::npos && layers.count(canonical.substr(0, colon));
}

// User-level (EZTrace) event of the merged archive: a region without a layer prefix, an I/O
// event on a handle of EZTrace's paradigm (the kernel's is `linux`), or a thread event; the
// kernel side writes regions with a layer prefix, `linux` I/O events and metrics.
bool user_event(const json& e) {
  const std::string k = e["k"];
  if (k == "Enter" || k == "Leave") return !kernel_region(e["r"]);
  if (e.contains("p")) return e["p"] != "linux";
  return k != "Metric";
}

// EZTrace's regions that are not calls of the program.
bool eztrace_own_region(const std::string& r) { return r == "Working" || r == "EZTrace finalize"; }

// --- The recording --------------------------------------------------------------------------

struct Recording {
  fs::path dir, out;
  ezio::test::Run run;
  int main_pid = 0, stdio_tid = 0, posix_tid = 0, spawner_tid = 0, child_pid = 0;
  Dump merged;
  const json& props() const { return merged.archive["properties"]; }
  const json& location(int tid) const { return merged.archive["locations"][std::to_string(tid)]; }
};

const Recording& recording() {
  static Recording r = [] {
    Recording r;
    r.dir = ezio::test::scratch_dir("e2e");
    r.out = r.dir / "out";
    r.run = ezio::test::eziotrace({"-o", r.out.string(), "--keep-parts", "--",
                                   program("io_threads"), r.dir.string(), program("io_child")});
    std::smatch m;
    if (std::regex_search(
            r.run.out, m,
            std::regex(R"(main=(\d+) stdio=(\d+) posix=(\d+) spawner=(\d+) child=(\d+))"))) {
      r.main_pid = std::stoi(m[1]);
      r.stdio_tid = std::stoi(m[2]);
      r.posix_tid = std::stoi(m[3]);
      r.spawner_tid = std::stoi(m[4]);
      r.child_pid = std::stoi(m[5]);
    }
    r.merged = dump_events(r.out / "eziotrace.otf2");
    return r;
  }();
  return r;
}

// EZTrace's own archive of one program, kept in <out>.parts.
fs::path eztrace_archive(const std::string& prog) {
  fs::path parts = recording().out;
  parts += ".parts";
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(parts, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == "eztrace_log.otf2" &&
        it->path().parent_path().filename() == prog + "_trace") {
      return it->path();
    }
  }
  return {};
}

// A region instance on a location, with the system calls whose innermost user-level region it is.
struct Call {
  std::string region;
  uint64_t t0 = 0, t1 = 0;
  bool user = false;
  json enter;                 // the ENTER event (attributes)
  std::vector<size_t> inner;  // indexes of the syscall:* calls directly under this user call
};

std::vector<Call> calls_of(const json& loc) {
  std::vector<Call> calls;
  std::vector<size_t> stack;
  for (const auto& e : loc["events"]) {
    if (e["k"] == "Enter") {
      Call c{e["r"], e["t"], 0, !kernel_region(e["r"]), e, {}};
      if (c.region.starts_with("syscall:")) {
        for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
          if (calls[*it].user) {
            calls[*it].inner.push_back(calls.size());
            break;
          }
        }
      }
      stack.push_back(calls.size());
      calls.push_back(std::move(c));
    } else if (e["k"] == "Leave") {
      if (stack.empty() || calls[stack.back()].region != e["r"]) {
        ADD_FAILURE() << "unbalanced LEAVE of " << e["r"] << " on " << loc["name"];
        return calls;
      }
      calls[stack.back()].t1 = e["t"];
      stack.pop_back();
    }
  }
  EXPECT_TRUE(stack.empty()) << stack.size() << " regions left open on " << loc["name"];
  return calls;
}

// The program's user-level calls on a location (EZTrace's own regions left out), in order.
std::vector<const Call*> user_calls(const std::vector<Call>& calls) {
  std::vector<const Call*> out;
  for (const auto& c : calls) {
    if (c.user && !eztrace_own_region(c.region)) out.push_back(&c);
  }
  return out;
}

// Names of the system calls inside a user call, checking they lie strictly inside it.
std::vector<std::string> inner_syscalls(const std::vector<Call>& calls, const Call& c,
                                        bool skip_memory = false) {
  static const std::set<std::string> memory{"syscall:mmap", "syscall:munmap", "syscall:brk",
                                            "syscall:mprotect", "syscall:madvise"};
  std::vector<std::string> out;
  for (size_t i : c.inner) {
    const Call& s = calls[i];
    EXPECT_LT(c.t0, s.t0) << s.region << " starts before its user call " << c.region;
    EXPECT_LT(s.t1, c.t1) << s.region << " ends after its user call " << c.region;
    if (skip_memory && memory.count(s.region)) continue;
    out.push_back(s.region);
  }
  return out;
}

using Names = std::vector<std::string>;
using Counts = std::map<std::string, int>;

// What each thread of the programs calls (io_threads.c, io_child.c), as EZTrace names the
// calls.
Counts expected_calls(const std::string& thread) {
  if (thread == "main") return {{"pthread_create", 3}, {"pthread_join", 3}};
  if (thread == "stdio")
    return {{"fopen", 2}, {"fwrite", N_FWRITE}, {"fclose", 2}, {"fread", N_FREAD}};
  if (thread == "posix") {
    return {{"open", 1},  {"write", 1}, {"pwrite", 1}, {"pread", 1},
            {"lseek", 1}, {"read", 1},  {"close", 1}};
  }
  if (thread == "child") {
    return {{"open", 2}, {"write", CHILD_WRITES}, {"pwrite", 1}, {"close", 2}, {"pread", 1},
            {"read", 1}};
  }
  return {};  // spawner: fork, execl, waitpid are not intercepted by posixio
}

// The system call each direct POSIX call makes.
const std::map<std::string, std::string>& direct_syscall() {
  static const std::map<std::string, std::string> m{
      {"open", "syscall:openat"},   {"read", "syscall:read"},       {"write", "syscall:write"},
      {"pread", "syscall:pread64"}, {"pwrite", "syscall:pwrite64"}, {"close", "syscall:close"},
      {"lseek", "syscall:lseek"}};
  return m;
}

// --- 1. Exit status, alignment, completeness -------------------------------------------------

TEST(EndToEnd, ExitStatusIsPassedOnAndTheArchiveIsExactAndComplete) {
  const auto& r = recording();
  EXPECT_EQ(r.run.status, IO_THREADS_EXIT_STATUS) << r.run.err;
  ASSERT_NE(r.child_pid, 0) << "the program did not print its ids: " << r.run.out << r.run.err;
  ASSERT_EQ(r.merged.reader.status, 0) << r.merged.reader.err;
  const auto& p = r.props();
  EXPECT_EQ(p["EZIOTRACE::ALIGNMENT_VIOLATIONS"], 0);
  EXPECT_EQ(p["EZIOTRACE::ALIGNMENT"], "exact");
  // Checked: every user call that always reaches the kernel (docs/merge.md §6).
  EXPECT_EQ(p["EZIOTRACE::ALIGNMENT_CHECKED_CALLS"], DIRECT_CALLS);
  EXPECT_EQ(p["EZIOTRACE::EZTRACE_PROCESSES"], 2);
  EXPECT_EQ(p["EZIOTRACE::STATUS"], "complete");
  // The kernel's events copied as the recorder wrote them (docs/trace-model.md, model 2): every
  // test here reads them as model 1 (tests/support/trace_model.py), syscall.bytes included.
  EXPECT_EQ(p["EZIOTRACE::TRACE_MODEL"], 2);
  EXPECT_EQ(p["EZIOTRACE::APPLICATION_END"],
            "exit status " + std::to_string(IO_THREADS_EXIT_STATUS));
  for (auto layer : {"syscall", "vfs", "fs", "pagecache", "block"}) {
    EXPECT_TRUE(p.contains(std::string("EZIOTRACE::LOST::") + layer)) << layer;
  }
  for (const auto& [name, value] : p.items()) {
    if (name.starts_with("EZIOTRACE::LOST::")) {
      EXPECT_EQ(value, 0) << name;
    }
  }
}

// --- 2. Each user call contains exactly its system call; buffered stdio ----------------------

TEST(EndToEnd, EachDirectPosixCallContainsExactlyItsSystemCall) {
  const auto& r = recording();
  for (auto [tid, thread] : {std::pair{r.posix_tid, "posix"}, std::pair{r.child_pid, "child"}}) {
    SCOPED_TRACE(thread);
    const auto& loc = r.location(tid);
    ASSERT_TRUE(loc.is_object()) << "no location for TID " << tid;
    auto calls = calls_of(loc);
    Counts seen;
    for (const Call* c : user_calls(calls)) {
      ++seen[c->region];
      auto want = direct_syscall().find(c->region);
      ASSERT_NE(want, direct_syscall().end()) << c->region;
      EXPECT_EQ(inner_syscalls(calls, *c), Names{want->second}) << c->region;
    }
    EXPECT_EQ(seen, expected_calls(thread));
  }
}

TEST(EndToEnd, SyscallsEztraceDoesNotWrapStayOutsideUserCalls) {
  // fsync is not wrapped by posixio: the kernel's fsync lies in no user call but "Working".
  const auto& r = recording();
  auto calls = calls_of(r.location(r.posix_tid));
  int fsyncs = 0;
  for (const auto& c : calls) {
    if (!c.user) continue;
    for (size_t i : c.inner) {
      if (calls[i].region == "syscall:fsync") {
        ++fsyncs;
        EXPECT_EQ(c.region, "Working");
      }
    }
  }
  EXPECT_EQ(fsyncs, 1);
}

TEST(EndToEnd, BufferedStdioMapsSeveralFwritesToOneWrite) {
  const auto& r = recording();
  const auto& loc = r.location(r.stdio_tid);
  ASSERT_TRUE(loc.is_object()) << "no location for TID " << r.stdio_tid;
  auto calls = calls_of(loc);
  auto user = user_calls(calls);
  // fopen, N_FWRITE x fwrite, fclose, fopen, N_FREAD x fread, fclose.
  Names want_order{"fopen"};
  for (int i = 0; i < N_FWRITE; ++i) want_order.push_back("fwrite");
  want_order.insert(want_order.end(), {"fclose", "fopen"});
  for (int i = 0; i < N_FREAD; ++i) want_order.push_back("fread");
  want_order.push_back("fclose");
  Names order;
  for (const Call* c : user) order.push_back(c->region);
  ASSERT_EQ(order, want_order);

  size_t at = 0;
  auto bytes = [&](size_t i, const char* attr) { return calls[i].enter["a"][attr].get<int64_t>(); };
  EXPECT_EQ(inner_syscalls(calls, *user[at++], true), Names{"syscall:openat"});
  // fwrite i fills the buffer past a multiple of STDIO_BUF: glibc writes the full buffer, once.
  int writes = 0;
  for (int i = 0; i < N_FWRITE; ++i, ++at) {
    int flushes = (i + 1) * FWRITE_BYTES / STDIO_BUF - i * FWRITE_BYTES / STDIO_BUF;
    Names want(flushes, "syscall:write");
    EXPECT_EQ(inner_syscalls(calls, *user[at], true), want) << "fwrite #" << i;
    for (size_t s : user[at]->inner) {
      if (calls[s].region != "syscall:write") continue;
      ++writes;
      EXPECT_EQ(bytes(s, "syscall.bytes"), STDIO_BUF);
      EXPECT_EQ(bytes(s, "syscall.result"), STDIO_BUF);
    }
  }
  EXPECT_EQ(writes, N_FWRITE * FWRITE_BYTES / STDIO_BUF);
  ASSERT_GT(N_FWRITE * FWRITE_BYTES % STDIO_BUF, 0);
  // fclose flushes the rest in one write, then closes.
  const Call& fclose_w = *user[at++];
  EXPECT_EQ(inner_syscalls(calls, fclose_w), (Names{"syscall:write", "syscall:close"}));
  if (fclose_w.inner.size() == 2) {
    EXPECT_EQ(bytes(fclose_w.inner[0], "syscall.bytes"), N_FWRITE * FWRITE_BYTES % STDIO_BUF);
    EXPECT_EQ(bytes(fclose_w.inner[0], "syscall.result"), N_FWRITE * FWRITE_BYTES % STDIO_BUF);
  }
  EXPECT_EQ(inner_syscalls(calls, *user[at++], true), Names{"syscall:openat"});
  // fread i needs a byte beyond the buffered ones: glibc reads one full buffer.
  int reads = 0;
  for (int i = 0; i < N_FREAD; ++i, ++at) {
    auto ceil_div = [](int a, int b) { return (a + b - 1) / b; };
    int fills = ceil_div((i + 1) * FREAD_BYTES, STDIO_BUF) - ceil_div(i * FREAD_BYTES, STDIO_BUF);
    Names want(fills, "syscall:read");
    EXPECT_EQ(inner_syscalls(calls, *user[at], true), want) << "fread #" << i;
    for (size_t s : user[at]->inner) {
      if (calls[s].region != "syscall:read") continue;
      EXPECT_EQ(bytes(s, "syscall.bytes"), STDIO_BUF);
      EXPECT_EQ(bytes(s, "syscall.result"),
                std::min(STDIO_BUF, N_FWRITE * FWRITE_BYTES - reads * STDIO_BUF));
      ++reads;
    }
  }
  EXPECT_EQ(reads, (N_FREAD * FREAD_BYTES + STDIO_BUF - 1) / STDIO_BUF);
  EXPECT_EQ(inner_syscalls(calls, *user[at++]), Names{"syscall:close"});
  // No read or write of the thread outside the stdio calls that made it.
  int all_rw = 0;
  for (const auto& c : calls) all_rw += c.region == "syscall:write" || c.region == "syscall:read";
  EXPECT_EQ(all_rw, writes + 1 + reads);
}

// --- 3. Threads and processes -----------------------------------------------------------------

TEST(EndToEnd, UserEventsAreOnTheLocationOfTheirThread) {
  const auto& r = recording();
  ASSERT_NE(r.child_pid, 0) << r.run.out;
  struct Thread {
    const char* name;
    int tid, pid, ppid;
  };
  std::vector<Thread> threads{{"main", r.main_pid, r.main_pid, -1},
                              {"stdio", r.stdio_tid, r.main_pid, -1},
                              {"posix", r.posix_tid, r.main_pid, -1},
                              {"spawner", r.spawner_tid, r.main_pid, -1},
                              {"child", r.child_pid, r.child_pid, r.main_pid}};
  std::set<std::string> ours;
  for (const auto& t : threads) {
    SCOPED_TRACE(t.name);
    ours.insert(std::to_string(t.tid));
    const auto& loc = r.location(t.tid);
    ASSERT_TRUE(loc.is_object()) << "no location for TID " << t.tid;
    EXPECT_EQ(loc["props"]["EZIOTRACE::TID"], t.tid);
    EXPECT_EQ(loc["props"]["EZIOTRACE::PID"], t.pid);
    if (t.ppid >= 0) {
      EXPECT_EQ(loc["props"]["EZIOTRACE::PPID"], t.ppid);
    }
    std::string prog = t.pid == r.child_pid ? "io_child" : "io_threads";
    EXPECT_NE(loc["group"].get<std::string>().find(prog), std::string::npos) << loc["group"];
    Counts seen;
    int working = 0;
    for (const auto& c : calls_of(loc)) {
      if (!c.user) continue;
      if (c.region == "Working") ++working;
      if (!eztrace_own_region(c.region)) ++seen[c.region];
    }
    EXPECT_EQ(seen, expected_calls(t.name));
    EXPECT_EQ(working, 1) << "EZTrace's thread region";
  }
  // No user event anywhere else (other threads, block devices, page cache).
  for (const auto& [id, loc] : r.merged.archive["locations"].items()) {
    if (ours.count(id)) continue;
    int user = 0;
    for (const auto& e : loc["events"]) user += user_event(e);
    EXPECT_EQ(user, 0) << loc["name"];
  }
}

// --- 4. One for one with EZTrace's own archives -----------------------------------------------

TEST(EndToEnd, UserEventsEqualEztracesOwnArchiveOneForOne) {
  const auto& r = recording();
  ASSERT_NE(r.child_pid, 0) << r.run.out;
  struct Process {
    std::string prog;
    std::vector<int> tids;  // in EZTrace's location order: threads are created one after another
  };
  std::vector<Process> processes{
      {"io_threads", {r.main_pid, r.stdio_tid, r.posix_tid, r.spawner_tid}},
      {"io_child", {r.child_pid}}};
  for (const auto& p : processes) {
    SCOPED_TRACE(p.prog);
    fs::path anchor = eztrace_archive(p.prog);
    ASSERT_FALSE(anchor.empty()) << "no EZTrace archive of " << p.prog << " in the parts";
    EzTrace ez = read_with_otf2_print(anchor);
    ASSERT_EQ(ez.size(), p.tids.size()) << anchor;
    std::set<int64_t> offsets;
    size_t i = 0;
    for (const auto& [ez_loc, ez_events] : ez) {
      int tid = p.tids[i++];
      SCOPED_TRACE("TID " + std::to_string(tid));
      std::vector<EzEvent> merged;
      for (const auto& e : r.location(tid)["events"]) {
        if (!user_event(e)) continue;
        merged.push_back(
            {print_name(e["k"]), e.contains("r") ? e["r"].get<std::string>() : "", e["t"]});
      }
      ASSERT_EQ(merged.size(), ez_events.size());
      for (size_t k = 0; k < merged.size(); ++k) {
        ASSERT_EQ(merged[k].kind, ez_events[k].kind) << "event " << k;
        ASSERT_EQ(merged[k].region, ez_events[k].region) << "event " << k;
        offsets.insert(static_cast<int64_t>(merged[k].time - ez_events[k].time));
      }
    }
    // EZTrace's clock is CLOCK_MONOTONIC minus the process's first_timestamp: one offset per
    // process.
    ASSERT_EQ(offsets.size(), 1u);
    const auto& group_props = r.location(p.tids[0])["props"];
    EXPECT_EQ(*offsets.begin(), group_props["EZIOTRACE::EZTRACE_FIRST_TIMESTAMP"].get<int64_t>());
  }
}

// --- 5. Readers ---------------------------------------------------------------------------------

TEST(EndToEnd, ReadersAcceptTheMergedArchiveWithoutWarning) {
  const auto& r = recording();
  fs::path anchor = r.out / "eziotrace.otf2";
  auto p = run({"otf2-print", anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "");
  EXPECT_GT(p.out.size(), 0u);
  EXPECT_EQ(r.merged.reader.status, 0);
  EXPECT_EQ(r.merged.reader.err, "") << "python3-otf2";
  EXPECT_TRUE(r.merged.archive["warnings"].empty()) << r.merged.archive["warnings"];
  auto v = run({"timeout", "300", "vite", anchor.string(), "-e", (r.dir / "x.svg").string()},
               {"QT_QPA_PLATFORM=offscreen"});
  EXPECT_NE(v.status, 124) << "vite timed out";
  // ViTE exits 0 whatever it finds; it prints its verdict on stderr (Qt's log).
  EXPECT_NE((v.out + v.err).find("0 errors and 0 warnings"), std::string::npos) << v.out << v.err;
  EXPECT_TRUE(fs::exists(r.dir / "x.svg"));
}

// --- 6. Bad input -------------------------------------------------------------------------------

TEST(EndToEnd, UnknownEztraceModuleIsRefusedWithoutArchive) {
  fs::path dir = ezio::test::scratch_dir("e2e-bad-module");
  auto p =
      ezio::test::eziotrace({"-o", (dir / "out").string(), "-t", "nosuchmodule", "--", "true"});
  EXPECT_NE(p.status, 0);
  EXPECT_NE(p.err.find("nosuchmodule"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("does not exist"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    EXPECT_NE(e.path().extension(), ".otf2") << e.path();
  }
}

}  // namespace
