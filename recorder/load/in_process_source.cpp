// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/in_process_source.h"

#include <utility>

namespace ezio::recorder {

InProcessSource::InProcessSource(std::unique_ptr<KernelPrograms> programs, uint64_t ring_bytes,
                                 RecordSink& sink)
    : programs_(std::move(programs)) {
  KernelPrograms::Session s = programs_->open_per_cpu(ring_bytes);
  slot_ = s.slot;
  ring_bytes_ = s.ring_bytes;
  reader_ = std::make_unique<RingGroup>(std::move(s.rings), s.ring_bytes, sink);
}

InProcessSource::~InProcessSource() = default;

void InProcessSource::trace_process(pid_t pid, int /*pidfd: the service's check*/) {
  programs_->trace_process(slot_, pid);
}

void InProcessSource::trace_running_process(pid_t pid, int pidfd) {
  programs_->trace_running_process(slot_, pid, pidfd);
}

size_t InProcessSource::traced_processes() const {
  // After stop() the session is gone: nothing is traced any more.
  return stopped_ ? 0 : programs_->traced_processes(slot_);
}

SessionTotals InProcessSource::stop() {
  if (stopped_) return *stopped_;
  // Not unhooked here: that waits for the kernel link by link (docs/costs.md, even
  // concurrently), which the destructor does, possibly on another thread while the archive is
  // finished and merged (record.h, RecordResult::teardown). The session's end alone is enough for
  // what stop() promises.
  programs_->quiesce_session(slot_);
  stopped_ = programs_->totals(slot_);
  stopped_->rings = static_cast<unsigned>(reader_->size());
  stopped_->ring_bytes = ring_bytes_;
  programs_->close_session(slot_, /*programs_ending=*/true);
  return *stopped_;
}

}  // namespace ezio::recorder
