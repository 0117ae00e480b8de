// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/service_source.h"

#include <poll.h>

#include "common/error.h"
#include "common/log.h"
#include "recorder/decode/record_store.h"
#include "recorder/probe/probe_plan_json.h"
#include "recorder/service/totals_json.h"

namespace ezio::recorder::service {

namespace {

uint64_t layer_mask(const LayerSet& layers) {
  uint64_t mask = 0;
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) mask |= uint64_t{layers[l]} << l;
  return mask;
}

}  // namespace

ServiceSource::ServiceSource(const std::filesystem::path& socket, uint64_t ring_bytes,
                             const LayerSet& layers, RecordStore& sink, FirstProcess first)
    : client_(std::make_unique<ServiceClient>(socket)), sink_(sink) {
  ServiceClient::Welcome w =
      first.pid > 0
          ? client_->hello_and_trace(ring_bytes, layer_mask(layers), first.pid, first.pidfd)
          : client_->hello(ring_bytes, layer_mask(layers));
  asked_ = first.pid;
  std::optional<ProbePlan> plan = plan_from_json(w.facts.value("plan", nlohmann::json()));
  if (!plan) fail("eziotraced sent a probe plan this eziotrace cannot read (another version?)");
  plan_ = std::move(*plan);
  // The service's plan, less the layers this session does not record (the archive says which
  // layers it has).
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    if (!layers[l] && l != EZIO_LAYER_SYSCALL && l != EZIO_LAYER_PROCESS)
      plan_.layers[l].on = false;
  }
  rings_ = std::move(w.rings);
  ring_bytes_ = w.ring_bytes;
  spdlog::debug("recording through eziotraced at {} (session {}, {} ring buffers)", socket.string(),
                w.slot, rings_.size());
}

ServiceSource::~ServiceSource() = default;

RingGroup& ServiceSource::reader() {
  if (!reader_) {
    check_ring_fds(rings_, ring_bytes_);
    reader_ = std::make_unique<RingGroup>(std::move(rings_), ring_bytes_, sink_);
    // Readable only when the service hangs up (or refuses): a wait for records ends with it.
    reader_->wake_on(client_->fd());
  }
  return *reader_;
}

void ServiceSource::lost_service(const std::string& why) const {
  if (!gone_.empty()) return;
  gone_ = why;
  spdlog::error(
      "{}: the recording stops here (the application goes on, untraced); what was recorded "
      "until now is kept, the archive marked interrupted",
      why);
}

bool ServiceSource::hung_up() const {
  pollfd p{client_->fd(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

void ServiceSource::trace_process(pid_t pid, int pidfd) {
  if (pid == std::exchange(asked_, -1)) return client_->traced();
  client_->trace(pid, pidfd);
}

bool ServiceSource::poll(int timeout_ms) {
  bool emptied = reader().poll(timeout_ms);
  if (gone_.empty() && hung_up()) {
    reader().unwatch(client_->fd());
    lost_service("eziotraced closed the connection (it stopped or died)");
  }
  return emptied;
}

bool ServiceSource::drain() { return reader().drain(); }

void ServiceSource::wake_on(int fd) { reader().wake_on(fd); }

void ServiceSource::unwatch(int fd) { reader().unwatch(fd); }

size_t ServiceSource::traced_processes() const {
  if (!gone_.empty()) return 0;
  try {
    return client_->count();
  } catch (const ServiceGone& e) {
    lost_service(e.what());
    return 0;
  }
}

SessionTotals ServiceSource::stop() {
  SessionTotals out;
  out.rings = static_cast<unsigned>(reader().size());
  out.ring_bytes = ring_bytes_;
  if (!gone_.empty()) return out;
  try {
    Totals t = totals_from_json(client_->end());
    out.lost = t.lost;
    out.devices = std::move(t.devices);
    out.reclaimed = std::move(t.reclaimed);
    out.lost_per_cpu = std::move(t.lost_per_cpu);
  } catch (const ServiceGone& e) {
    lost_service(e.what());
  }
  return out;
}

}  // namespace ezio::recorder::service
