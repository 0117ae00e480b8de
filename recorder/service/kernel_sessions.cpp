// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/kernel_sessions.h"

#include <sys/utsname.h>

#include <chrono>
#include <future>

#include "common/log.h"
#include "recorder/load/kernel_programs.h"
#include "recorder/probe/probe_plan_json.h"
#include "recorder/service/protocol.h"
#include "recorder/service/totals_json.h"

namespace ezio::recorder::service {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static_assert(kAllLayers == (1u << EZIO_LAYER_COUNT) - 1, "protocol.h's layers are record.h's");

class KernelSessions : public SessionKernel {
 public:
  explicit KernelSessions(std::unique_ptr<KernelPrograms> programs)
      : programs_(std::move(programs)), facts_(make_facts(*programs_)) {}
  ~KernelSessions() override {
    if (detaching_.valid()) detaching_.wait();  // before the programs go
  }
  void attach() override {
    settle_detach();
    if (programs_->attached()) return;
    auto t0 = std::chrono::steady_clock::now();
    programs_->attach();
    spdlog::debug("BPF programs attached in {:.2f} ms", ms_since(t0));
  }
  void detach() override {
    settle_detach();
    if (!programs_->attached()) return;
    // Unhooking waits for the kernel (a grace period per hook): not on the loop's time. Only the
    // links are touched there; the next attach() waits for it.
    detaching_ = std::async(std::launch::async, [this] {
      auto t0 = std::chrono::steady_clock::now();
      programs_->detach();
      programs_->forget_in_flight();
      spdlog::debug("BPF programs detached in {:.2f} ms", ms_since(t0));
    });
  }
  unsigned reserve() override { return programs_->reserve_slot(); }
  RingSet make_rings(unsigned slot, uint64_t total_bytes, bool per_cpu) override {
    return programs_->install_rings(slot, total_bytes, per_cpu);
  }
  void remove_ring(unsigned slot) override { programs_->remove_ring(slot); }
  Opened open(unsigned slot, RingSet rings) override {
    KernelPrograms::Session s = programs_->open_reserved(slot, std::move(rings));
    return {s.slot, std::move(s.rings), s.ring_bytes};
  }
  void unreserve(unsigned slot) override { programs_->unreserve_slot(slot); }
  void set_layers(unsigned slot, uint32_t mask) override {
    LayerSet layers{};
    for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) layers[l] = (mask >> l) & 1;
    programs_->set_layers(slot, layers);
  }
  void trace(unsigned slot, pid_t pid) override { programs_->trace_process(slot, pid); }
  size_t traced(unsigned slot) const override { return programs_->traced_processes(slot); }
  nlohmann::json end(unsigned slot) override {
    programs_->quiesce_session(slot);
    SessionTotals s = programs_->totals(slot);
    return totals_to_json(
        {s.lost, std::move(s.devices), std::move(s.reclaimed), std::move(s.lost_per_cpu)});
  }
  void close(unsigned slot) override { programs_->close_session(slot); }
  void record_cgroup(unsigned slot, uint64_t cgroup_id, unsigned level, uint32_t uid) override {
    programs_->record_cgroup(slot, cgroup_id, level, uid);
  }
  bool enroll(unsigned slot, pid_t pid) override {
    return programs_->enroll_running_process(slot, pid);
  }
  std::vector<uint64_t> lost(unsigned slot) const override {
    SessionTotals t = programs_->totals(slot);
    return {t.lost.begin(), t.lost.end()};
  }
  const std::string& facts() const override { return facts_; }

 private:
  // Made once: every HELLO is answered with them, on the way to the application's start.
  static std::string make_facts(const KernelPrograms& programs) {
    utsname u{};
    uname(&u);
    return nlohmann::json{{"plan", plan_to_json(programs.plan())}, {"kernel_release", u.release}}
        .dump();
  }
  // The detach under way finished; what failed is said (the programs may stay attached).
  void settle_detach() {
    if (!detaching_.valid()) return;
    try {
      detaching_.get();
    } catch (const std::exception& e) {
      spdlog::warn("detaching the BPF programs: {}", e.what());
    }
  }

  std::unique_ptr<KernelPrograms> programs_;
  std::string facts_;
  std::future<void> detaching_;
};

}  // namespace

std::unique_ptr<SessionKernel> load_kernel_sessions(const std::string& layers) {
  // Loaded now (the verifier's time), attached by the first session.
  return std::make_unique<KernelSessions>(
      load_kernel_programs(parse_layers(layers), true, std::future<RingSet>(), false));
}

}  // namespace ezio::recorder::service
