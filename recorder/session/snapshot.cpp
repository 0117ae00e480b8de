// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/snapshot.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "recorder/archive/kernel_archive.h"
#include "recorder/decode/record_store.h"
#include "recorder/probe/probe.h"
#include "recorder/probe/probe_plan_json.h"
#include "recorder/service/client.h"
#include "recorder/session/archive_output.h"
#include "recorder/session/privileges.h"

namespace ezio::recorder {
namespace {

std::vector<char> read_all(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) fail("eziotraced's snapshot is unreadable: {}", errno_text(errno));
  std::vector<char> data(size_t(st.st_size));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = pread(fd, data.data() + done, data.size() - done, off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("eziotraced's snapshot is unreadable: {}", n < 0 ? errno_text(errno) : "EOF");
    done += size_t(n);
  }
  return data;
}

// The records (u32 size, the record, padded to 8 bytes) into the store.
void add_records(const std::vector<char>& data, size_t bytes, RecordStore& store) {
  if (bytes > data.size()) fail("eziotraced's snapshot is shorter than it says");
  for (size_t at = 0; at < bytes;) {
    uint32_t size;
    if (bytes - at < sizeof(size)) fail("eziotraced's snapshot is cut in a record");
    std::memcpy(&size, data.data() + at, sizeof(size));
    at += sizeof(size);
    if (size > bytes - at) fail("eziotraced's snapshot is cut in a record");
    store.add(data.data() + at, size);
    at = (at + size + 7) & ~size_t{7};
  }
}

std::string host_name() {
  std::array<char, 256> buf{};
  return gethostname(buf.data(), buf.size() - 1) == 0 ? std::string(buf.data()) : "localhost";
}

RecordingInfo snapshot_info(const SnapshotOptions& o, const nlohmann::json& b) {
  RecordingInfo info;
  info.status = "snapshot";
  info.recording_path = "eziotraced";
  info.command = {"eziotrace", "snapshot", "--job", o.job};
  info.application_end = "running (snapshot)";
  info.hostname = host_name();
  info.kernel_release = b.value("kernel_release", "");
  SnapshotWindow w;
  w.job = b.at("job").get<std::string>();
  w.asked_start_ns = b.at("asked_start_ns").get<uint64_t>();
  w.start_ns = b.at("window_start_ns").get<uint64_t>();
  w.end_ns = b.at("window_end_ns").get<uint64_t>();
  w.dropped = b.at("dropped").get<uint64_t>();
  w.rule = b.value("rule", "");
  info.start_monotonic_ns = w.start_ns;
  info.end_monotonic_ns = w.end_ns;
  // The realtime of the window's start, by this machine's clocks (the service's).
  info.start_realtime_ns = realtime_ns() - (monotonic_ns() - w.start_ns);
  info.snapshot = w;
  auto lost = b.value("lost", std::vector<uint64_t>());
  for (size_t l = 0; l < lost.size() && l < info.lost.size(); ++l) info.lost[l] = lost[l];
  std::optional<ProbePlan> plan = plan_from_json(b.value("plan", nlohmann::json()));
  if (!plan) fail("eziotraced sent a probe plan this eziotrace cannot read (another version?)");
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    if (l != EZIO_LAYER_PROCESS) info.probes[l] = probe_property(plan->layers[l]);
  }
  info.probes[EZIO_LAYER_PROCESS] = "tp_btf/sched_process_fork+exec+exit";
  return info;
}

}  // namespace

SnapshotResult take_snapshot(const SnapshotOptions& o) {
  if (o.job.empty()) fail("snapshot: --job names the job (a cgroup eziotraced flight-records)");
  ArchiveOutput output(o.output, "snapshot", o.force);
  nlohmann::json request = {{"job", o.job}};
  if (o.seconds > 0) request["seconds"] = o.seconds;
  service::ServiceClient client(o.socket);
  service::Message m = client.snapshot(request);
  if (m.fds.size() != 1) fail("eziotraced sent no snapshot");
  SnapshotResult r;
  RecordStore store;
  std::vector<char> data = read_all(m.fds.front().get());
  size_t bytes = 0;
  try {
    bytes = m.body.at("records_bytes").get<size_t>();
    r.info = snapshot_info(o, m.body);
    r.events = m.body.at("events").get<uint64_t>();
    add_records(data, bytes, store);
    auto processes = nlohmann::json::parse(data.begin() + long(bytes), data.end());
    for (const auto& p : processes) {
      r.info.named_processes.push_back({p.at("pid").get<uint32_t>(), p.at("ppid").get<uint32_t>(),
                                        p.at("comm").get<std::string>(),
                                        p.at("exe").get<std::string>()});
    }
  } catch (const nlohmann::json::exception& e) {
    fail("eziotraced's snapshot is unreadable: {}", e.what());
  }
  r.info.lost[EZIO_LAYER_SYSCALL] += store.malformed();
  r.archive = output.path();
  write_kernel_archive(output.staged(), store, r.info);
  output.publish(target_user());
  return r;
}

}  // namespace ezio::recorder
