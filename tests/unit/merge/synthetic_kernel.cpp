// SPDX-License-Identifier: GPL-2.0-only
#include "synthetic_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/otf2/writer.h"

namespace ezio::test {
using converters::EventKind;

namespace {
// The system call each directly-reaching user call makes (fclose: the flush write, then close).
const std::map<std::string, std::vector<std::string>> kCalls = {
    {"open", {"openat"}},     {"fopen", {"openat"}},  {"read", {"read"}},   {"write", {"write"}},
    {"pwrite", {"pwrite64"}}, {"pread", {"pread64"}}, {"close", {"close"}}, {"lseek", {"lseek"}},
    {"fclose", {"close"}},    {"fread", {"read"}}};
}  // namespace

SyntheticCounts write_synthetic_kernel(const std::vector<converters::EztraceInput>& inputs,
                                       const std::filesystem::path& dir, uint64_t lost_syscalls,
                                       otf2::EventTap* tap, bool write_events) {
  SyntheticCounts counts;
  otf2::ArchiveWriter w(dir);
  w.tap(tap, write_events);
  otf2::Ref machine = w.system_tree_node("testhost", "machine");
  otf2::Ref linux_io = w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                                     OTF2_IO_PARADIGM_FLAG_OS);
  otf2::TypedAttribute call_id = w.attribute(schema::kCallId);
  uint64_t next_call = 1, t_min = UINT64_MAX, t_max = 0;
  auto region = [&](const std::string& name) {
    return w.region(name, "syscall:" + name, "eziotrace syscall layer", OTF2_REGION_ROLE_FILE_IO);
  };
  for (const char* n :
       {"openat", "read", "write", "pwrite64", "pread64", "close", "lseek", "fsync"}) {
    region(n);
  }
  // Returns the call's call.id.
  auto span = [&](OTF2_LocationRef loc, const std::string& name, uint64_t t0, uint64_t t1,
                  std::optional<std::string> created_file) {
    otf2::EventWriter ew = w.event_writer(loc);
    uint64_t id = next_call++;
    ew.enter(t0, region(name), ew.attributes().add(call_id, id));
    if (created_file) {
      otf2::Ref h = w.io_handle(fmt::format("{} [synthetic]", *created_file),
                                w.io_file(*created_file, machine), linux_io);
      ew.io_create_handle(t1, h, OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_CREATION_FLAG_NONE,
                          OTF2_IO_STATUS_FLAG_NONE);
    }
    ew.leave(t1, region(name));
    t_min = std::min(t_min, t0);
    t_max = std::max(t_max, t1);
    return id;
  };
  struct Request {
    uint64_t t, call;
  };
  std::vector<Request> requests;
  for (const auto& in : inputs) {
    const auto& p = in.process;
    otf2::Ref g = w.location_group(fmt::format("{} [{}]", p.program, p.pid),
                                   OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
    w.location_group_property(g, "EZIOTRACE::PID", p.pid);
    w.location_group_property(g, "EZIOTRACE::PPID", p.ppid);
    const auto& d = in.archive->defs;
    const converters::Archive original = converters::read_archive(in.archive->anchor);
    for (const auto& t : p.threads) {
      w.location(t.tid, fmt::format("{} [{}]", p.program, t.tid), OTF2_LOCATION_TYPE_CPU_THREAD, g);
      w.location_property(t.tid, "EZIOTRACE::TID", t.tid);
      auto ev = original.events.find(t.location);
      if (ev == original.events.end()) continue;
      // Each user call of kCalls gets its syscall(s) in the middle third of the widest gap between
      // its own events: there the real function ran (EZTrace records the call's I/O events
      // around it), so no user event lands inside a system call.
      struct Open {
        std::string name;
        uint64_t t, gap0, gap1;
      };
      std::vector<Open> stack;
      uint64_t last_leave = 0, previous = 0;
      for (const auto& e : ev->second) {
        uint64_t at = e.time + p.time_offset();
        if (!stack.empty() && at - previous > stack.back().gap1 - stack.back().gap0) {
          stack.back().gap0 = previous;
          stack.back().gap1 = at;
        }
        previous = at;
        if (e.kind == EventKind::Enter) {
          stack.push_back({d.str(d.regions.at(e.ref).name), at, at, at});
          continue;
        }
        if (e.kind != EventKind::Leave || stack.empty()) continue;
        Open o = stack.back();
        stack.pop_back();
        auto c = kCalls.find(o.name);
        if (c != kCalls.end() && o.gap1 - o.gap0 >= 9) {
          uint64_t step = (o.gap1 - o.gap0) / (3 * c->second.size());
          uint64_t k = o.gap0 + step;
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
          uint64_t fsync = span(t.tid, "fsync", last_leave + 1, last_leave + 2, std::nullopt);
          if (!counts.app_block_call) {
            counts.app_block_call = fsync;
            requests.push_back({last_leave + 2, fsync});
          }
        }
      }
      if (t.rank == 0) {
        // EZTrace's own I/O on the main thread: a write to its trace file after the run.
        uint64_t end = p.exit_ns;
        // Its finalization: a call without a file (host lookup), then its last trace file.
        span(t.tid, "write", end - 30, end - 20, std::nullopt);
        uint64_t own =
            span(t.tid, "openat", end - 10, end - 5, (p.trace_dir() / "eztrace_log.def").string());
        counts.own_io_calls += 2;
        if (!counts.own_block_call) {
          counts.own_block_call = own;
          requests.push_back({end - 4, own});
        }
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
    // Its page-cache metric location, in its process's group (docs/trace-model.md).
    OTF2_LocationRef pc = (uint64_t(3) << 32) | rm_pid;
    w.location(pc, fmt::format("pagecache rm [{}]", rm_pid), OTF2_LOCATION_TYPE_METRIC, rg);
    w.location_property(pc, "EZIOTRACE::TID", rm_pid);
    otf2::Ref hits = w.metric_member("pagecache.hits", "", OTF2_METRIC_TYPE_OTHER,
                                     OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages");
    otf2::Ref metric =
        w.metric_class({hits}, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
    w.event_writer(pc).metric(p.ctor_ns + 2, metric, 3);
  }
  // The block device, as the recorder writes it: begin (with call.id), issued, complete.
  otf2::Ref bg = w.location_group("block vda", OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
  OTF2_LocationRef dev = uint64_t(1) << 32;
  w.location(dev, "block vda", OTF2_LOCATION_TYPE_CPU_THREAD, bg);
  otf2::Ref vda = w.io_handle("/dev/vda", w.io_file("/dev/vda", machine), linux_io,
                              OTF2_IO_HANDLE_FLAG_PRE_CREATED);
  std::sort(requests.begin(), requests.end(),
            [](const Request& a, const Request& b) { return a.t < b.t; });
  uint64_t n = 0;
  for (const Request& r : requests) {
    otf2::EventWriter ew = w.event_writer(dev);
    ++n;
    ew.io_operation_begin(r.t + 100, vda, OTF2_IO_OPERATION_MODE_WRITE,
                          OTF2_IO_OPERATION_FLAG_NON_BLOCKING, 4096, n,
                          ew.attributes().add(call_id, r.call));
    ew.io_operation_issued(r.t + 200, vda, n);
    ew.io_operation_complete(r.t + 300, vda, 4096, n);
    t_max = std::max(t_max, r.t + 300);
  }
  w.system_tree_node_property(machine, "EZIOTRACE::STATUS", std::string_view("complete"));
  w.system_tree_node_property(machine, "EZIOTRACE::LOST::syscall", lost_syscalls);
  w.clock({1'000'000'000, t_min, t_max - t_min, OTF2_UNDEFINED_TIMESTAMP});
  w.close();
  return counts;
}

}  // namespace ezio::test
