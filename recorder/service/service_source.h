// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// record()'s KernelSource through eziotraced: the session's ring buffers (one per CPU) read here,
// as in-process (RingGroup), through the fds the service sent (mmap only, no bpf() call: the user
// needs no privilege); everything else is a request on the session's socket.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "recorder/load/kernel_source.h"
#include "recorder/load/ring_group.h"
#include "recorder/probe/probe.h"
#include "recorder/service/client.h"

namespace ezio::recorder {
class RecordStore;
}  // namespace ezio::recorder

namespace ezio::recorder::service {

class ServiceSource : public KernelSource {
 public:
  // Connects and opens a session recording `layers` of those the service loaded (fails with the
  // service's refusal); with `first`, asks for it to be traced at once (trace_process() then
  // takes the answer).
  ServiceSource(const std::filesystem::path& socket, uint64_t ring_bytes, const LayerSet& layers,
                RecordStore& sink, FirstProcess first = {});
  ~ServiceSource() override;
  const ProbePlan& plan() const override { return plan_; }
  void trace_process(pid_t pid, int pidfd) override;
  bool poll(int timeout_ms) override;
  bool drain() override;
  void wake_on(int fd) override;
  void unwatch(int fd) override;
  size_t traced_processes() const override;
  SessionTotals stop() override;
  std::string path_name() const override { return "eziotraced"; }
  std::string interrupted() const override { return gone_; }

 private:
  void lost_service(const std::string& why) const;
  bool hung_up() const;
  RingGroup& reader();
  std::unique_ptr<ServiceClient> client_;
  // Made at its first use, once the application is released, so that none of its mappings delays
  // the application's exec.
  std::unique_ptr<RingGroup> reader_;
  std::vector<UniqueFd> rings_;
  uint64_t ring_bytes_ = 0;  // each ring's
  RecordStore& sink_;
  ProbePlan plan_;
  mutable std::string gone_;  // why the service is no longer there ("" while it is)
  pid_t asked_ = -1;          // the first process, whose TRACED is still to be read
};

}  // namespace ezio::recorder::service
