#include "synthetic_kernel.h"

#include <fmt/format.h>

#include <map>

#include "common/otf2/writer.h"

namespace ezio::test {
using converters::EventKind;

namespace {
// The system call each directly-reaching user call makes (fclose: the flush write, then close).
const std::map<std::string, std::vector<std::string>> kCalls = {
    {"open", {"openat"}}, {"fopen", {"openat"}},    {"read", {"read"}},
    {"write", {"write"}}, {"pwrite", {"pwrite64"}}, {"close", {"close"}},
    {"lseek", {"lseek"}}, {"fclose", {"close"}},    {"fread", {"read"}}};
}  // namespace

SyntheticCounts write_synthetic_kernel(const std::vector<converters::EztraceInput>& inputs,
                                       const std::filesystem::path& dir) {
  SyntheticCounts counts;
  otf2::ArchiveWriter w(dir);
  otf2::Ref machine = w.system_tree_node("testhost", "machine");
  otf2::Ref linux_io = w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                                     OTF2_IO_PARADIGM_FLAG_OS);
  otf2::Ref call_id = w.attribute("call.id", "id of the call", OTF2_TYPE_UINT64);
  uint64_t next_call = 1, t_min = UINT64_MAX, t_max = 0;
  auto region = [&](const std::string& name) {
    return w.region(name, "syscall:" + name, "eziotrace syscall layer", OTF2_REGION_ROLE_FILE_IO);
  };
  for (const char* n : {"openat", "read", "write", "pwrite64", "close", "lseek", "fsync"}) {
    region(n);
  }
  auto span = [&](OTF2_LocationRef loc, const std::string& name, uint64_t t0, uint64_t t1,
                  std::optional<std::string> created_file) {
    OTF2_EvtWriter* ew = w.events(loc);
    OTF2_AttributeList_AddUint64(w.attributes(), call_id, next_call++);
    OTF2_EvtWriter_Enter(ew, w.attributes(), t0, region(name));
    if (created_file) {
      otf2::Ref h = w.io_handle(fmt::format("{} [synthetic]", *created_file),
                                w.io_file(*created_file, machine), linux_io);
      OTF2_EvtWriter_IoCreateHandle(ew, nullptr, t1, h, OTF2_IO_ACCESS_MODE_READ_WRITE,
                                    OTF2_IO_CREATION_FLAG_NONE, OTF2_IO_STATUS_FLAG_NONE);
    }
    OTF2_EvtWriter_Leave(ew, nullptr, t1, region(name));
    t_min = std::min(t_min, t0);
    t_max = std::max(t_max, t1);
  };
  for (const auto& in : inputs) {
    const auto& p = in.process;
    otf2::Ref g = w.location_group(fmt::format("{} [{}]", p.program, p.pid),
                                   OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
    w.location_group_property(g, "EZIOTRACE::PID", p.pid);
    w.location_group_property(g, "EZIOTRACE::PPID", p.ppid);
    const auto& d = in.archive.defs;
    for (const auto& t : p.threads) {
      w.location(t.tid, fmt::format("{} [{}]", p.program, t.tid), OTF2_LOCATION_TYPE_CPU_THREAD, g);
      w.location_property(t.tid, "EZIOTRACE::TID", t.tid);
      auto ev = in.archive.events.find(t.location);
      if (ev == in.archive.events.end()) continue;
      // Each user call of kCalls gets its syscall(s) in its middle third.
      struct Open {
        std::string name;
        uint64_t t;
      };
      std::vector<Open> stack;
      uint64_t last_leave = 0;
      for (const auto& e : ev->second) {
        uint64_t at = e.time + p.first_timestamp;
        if (e.kind == EventKind::Enter) {
          stack.push_back({d.str(d.regions.at(e.ref).name), at});
          continue;
        }
        if (e.kind != EventKind::Leave || stack.empty()) continue;
        Open o = stack.back();
        stack.pop_back();
        auto c = kCalls.find(o.name);
        if (c != kCalls.end() && at - o.t >= 9) {
          uint64_t step = (at - o.t) / (3 * c->second.size());
          uint64_t k = o.t + step;
          for (const auto& sc : c->second) {
            std::optional<std::string> file;
            if (sc == "openat") file = (p.cwd / fmt::format("file-of-{}", o.t)).string();
            span(t.tid, sc, k, k + step, file);
            k += 2 * step;
            ++counts.syscalls_in_user_calls;
          }
        }
        // fsync is not wrapped by EZTrace: a kernel call between user calls.
        if (o.name == "pwrite") {
          last_leave = at;
          span(t.tid, "fsync", last_leave + 1, last_leave + 2, std::nullopt);
        }
      }
      if (t.rank == 0) {
        // EZTrace's own I/O on the main thread: a write to its trace file after the run.
        uint64_t end = p.exit_ns;
        // Its finalization: a call without a file (host lookup), then its last trace file.
        span(t.tid, "write", end - 30, end - 20, std::nullopt);
        span(t.tid, "openat", end - 10, end - 5, (p.trace_dir() / "eztrace_log.def").string());
        counts.own_io_calls += 2;
      }
    }
    // EZTrace's `rm -rf <prog>_trace` child, inside the start-up window.
    uint32_t rm_pid = 4000000 + p.pid;
    otf2::Ref rg =
        w.location_group(fmt::format("rm [{}]", rm_pid), OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
    w.location_group_property(rg, "EZIOTRACE::PID", rm_pid);
    w.location_group_property(rg, "EZIOTRACE::PPID", p.pid);
    w.location(rm_pid, fmt::format("rm [{}]", rm_pid), OTF2_LOCATION_TYPE_CPU_THREAD, rg);
    w.location_property(rm_pid, "EZIOTRACE::TID", rm_pid);
    span(rm_pid, "openat", p.ctor_ns + 1, p.ctor_ns + 2, std::string("/etc/locale.alias"));
  }
  w.system_tree_node_property(machine, "EZIOTRACE::STATUS", std::string_view("complete"));
  w.system_tree_node_property(machine, "EZIOTRACE::LOST::syscall", uint64_t{0});
  w.clock({1'000'000'000, t_min, t_max - t_min, OTF2_UNDEFINED_TIMESTAMP});
  w.close();
  return counts;
}

}  // namespace ezio::test
