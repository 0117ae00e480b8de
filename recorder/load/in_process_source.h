// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The kernel side of a recording run as root without eziotraced: the recorder loads the programs
// itself, takes their slot 0 and reads its ring buffers (one per CPU) in-process.
#include <memory>
#include <optional>
#include <string>

#include "recorder/core/record_sink.h"
#include "recorder/load/kernel_programs.h"
#include "recorder/load/kernel_source.h"
#include "recorder/load/ring_group.h"

namespace ezio::recorder {

class InProcessSource : public KernelSource {
 public:
  // ring_bytes: the rings' total (make_ring_set); those installed at load are taken, if any.
  InProcessSource(std::unique_ptr<KernelPrograms> programs, uint64_t ring_bytes, RecordSink& sink);
  ~InProcessSource() override;

  const ProbePlan& plan() const override { return programs_->plan(); }
  void trace_process(pid_t pid, int pidfd) override;
  bool traces_running_processes() const override { return true; }
  void trace_running_process(pid_t pid, int pidfd) override;
  bool poll(int timeout_ms) override { return reader_->poll(timeout_ms); }
  bool drain() override { return reader_->drain(); }
  void wake_on(int fd) override { reader_->wake_on(fd); }
  void unwatch(int fd) override { reader_->unwatch(fd); }
  size_t traced_processes() const override;
  // Ends the session (nothing more enters its ring), reads its totals and closes it (once; again:
  // the same). The programs stay hooked until the source is destroyed.
  SessionTotals stop() override;
  std::string path_name() const override { return "in-process"; }
  bool slow_teardown() const override { return true; }

 private:
  std::unique_ptr<KernelPrograms> programs_;
  unsigned slot_;
  std::unique_ptr<RingGroup> reader_;
  uint64_t ring_bytes_ = 0;               // each ring's
  std::optional<SessionTotals> stopped_;  // stop()'s answer, once stopped
};

}  // namespace ezio::recorder
