// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/kernel_programs.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "recorder/core/bpf_map_walk.h"
#include "recorder/core/bpf_object.h"
#include "recorder/core/concurrent_close.h"
#include "recorder/core/device_use.h"
#include "recorder/core/recording_info.h"
#include "recorder/core/skeleton.h"
#include "recorder/core/syscall_table.h"
#include "recorder/load/probe_apply.h"
#include "recorder/load/program_figures.h"
#include "recorder/load/ring_buffers.h"
#include "recorder/probe/attach_ids.h"
#include "recorder/probe/kernel_cache.h"
#include "rings.h"

namespace ezio::recorder {

namespace {

// The keys of a table (a hash map keyed by Key) that match, collected before any is deleted.
template <typename Key, typename Match>
std::vector<Key> keys_where(int fd, Match match) {
  std::vector<Key> keys;
  for_each_key<Key>(fd, [&](const Key& k) {
    if (match(k)) keys.push_back(k);
  });
  return keys;
}

template <typename Key>
void delete_keys(int fd, const std::vector<Key>& keys) {
  for (const Key& k : keys) bpf_map_delete_elem(fd, &k);  // gone meanwhile (an exit): fine
}

std::vector<uint32_t> traced_of(int traced_fd, uint32_t session) {
  return keys_where<uint32_t>(traced_fd, [&](uint32_t tgid) {
    ezio_traced v{};
    return bpf_map_lookup_elem(traced_fd, &tgid, &v) == 0 && v.session == session;
  });
}

int possible_cpus() {
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) fail("cannot count the CPUs: {}", errno_text(-ncpu));
  return ncpu;
}

// The drop counters of a slot (or of no session: slot == kMaxSessions, id 0), per layer, over
// CPUs: each counter counts for the session id in its high half (bpf/common.bpf.h, drops).
std::array<uint64_t, EZIO_LAYER_COUNT> read_drops(int drops_fd, unsigned slot, uint32_t id) {
  std::array<uint64_t, EZIO_LAYER_COUNT> total{};
  std::vector<uint64_t> per_cpu(possible_cpus());
  for (uint32_t layer = 0; layer < EZIO_LAYER_COUNT; ++layer) {
    uint32_t key = slot * EZIO_LAYER_COUNT + layer;
    if (bpf_map_lookup_elem(drops_fd, &key, per_cpu.data()) != 0) {
      fail("cannot read the drop counters: {}", errno_text(errno));
    }
    for (uint64_t v : per_cpu) {
      if ((v >> 32) == id) total[layer] += v & 0xffffffffu;
    }
  }
  return total;
}

// The drop counters of a slot's session id per CPU, over layers.
std::vector<uint64_t> read_drops_per_cpu(int drops_fd, unsigned slot, uint32_t id) {
  std::vector<uint64_t> total(possible_cpus()), per_cpu(total.size());
  for (uint32_t layer = 0; layer < EZIO_LAYER_COUNT; ++layer) {
    uint32_t key = slot * EZIO_LAYER_COUNT + layer;
    if (bpf_map_lookup_elem(drops_fd, &key, per_cpu.data()) != 0) {
      fail("cannot read the drop counters: {}", errno_text(errno));
    }
    for (size_t c = 0; c < per_cpu.size(); ++c) {
      if ((per_cpu[c] >> 32) == id) total[c] += per_cpu[c] & 0xffffffffu;
    }
  }
  return total;
}

// Gives a slot's counters to session id, at zero: from here a program of an earlier session of
// the slot can no longer count into them.
void reset_drops(int drops_fd, unsigned slot, uint32_t id) {
  std::vector<uint64_t> fresh(possible_cpus(), uint64_t{id} << 32);
  for (uint32_t layer = 0; layer < EZIO_LAYER_COUNT; ++layer) {
    uint32_t key = slot * EZIO_LAYER_COUNT + layer;
    if (bpf_map_update_elem(drops_fd, &key, fresh.data(), BPF_ANY) != 0) {
      fail("cannot reset the drop counters: {}", errno_text(errno));
    }
  }
}

// The programs in flight for slot now (bpf/common.bpf.h, in_flight): its counters over CPUs.
uint64_t sum_in_flight(int in_flight_fd, unsigned slot) {
  std::vector<uint64_t> per_cpu(possible_cpus());
  uint32_t key = slot;
  if (bpf_map_lookup_elem(in_flight_fd, &key, per_cpu.data()) != 0) {
    fail("cannot read the programs in flight: {}", errno_text(errno));
  }
  uint64_t sum = 0;
  for (uint64_t n : per_cpu) sum += n;
  return sum;
}

// Waits until no program is in flight for slot. A program is in flight for microseconds, unless
// preempted (a fentry program on a preemptible kernel): false once kInFlightWaitNs have passed.
constexpr uint64_t kInFlightWaitNs = 2'000'000;
// How long the end of a session waits for its block requests to complete: a request takes
// milliseconds, a device hung for longer costs the recording those requests (counted lost), not
// its end.
constexpr std::chrono::milliseconds kBlockRequestWait{1000};

bool wait_in_flight(int in_flight_fd, unsigned slot) {
  uint64_t deadline = monotonic_ns() + kInFlightWaitNs;
  while (sum_in_flight(in_flight_fd, slot) != 0) {
    if (monotonic_ns() > deadline) return false;
    sched_yield();  // a program preempted on this CPU may be the one waited for
  }
  return true;
}

uint32_t layer_mask(const LayerSet& layers) {
  uint32_t mask = 0;
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) mask |= uint32_t{layers[l]} << l;
  return mask;
}

}  // namespace

void KernelPrograms::open(const std::string& core_btf) {
  register_attach_handlers();  // before the open, which picks each program's handler
  skel_ = open_skeleton(core_btf);
  for (const auto& sc : syscall_table()) {
    skel_->rodata->sc_desc[sc.nr] = sc.desc;
  }
  apply_probe_plan(skel_.get(), plan_);
}

// The skeleton's load, with no program selected: the tables. The first ring is installed in the
// map of rings on another thread meanwhile (it waits for the ring, then for a grace period: longer
// than the tables, so the programs load meanwhile too); the future says when it is done.
std::future<RingSet> KernelPrograms::make_tables(std::future<RingSet> first_ring) {
  std::future<RingSet> installed;
  if (first_ring.valid()) {
    UniqueFd rings = make_rings_map();
    if (int err = bpf_map__reuse_fd(skel_->maps.rings, rings.get())) {
      fail("cannot use the map of ring buffers: {}", errno_text(-err));
    }
    installed = std::async(std::launch::async, install_first_rings, std::move(rings),
                           std::move(first_ring));
  }
  if (int err = eziotrace__load(skel_.get())) {
    fail("cannot make the BPF tables: {}", errno_text(-err));
  }
  return installed;
}

void KernelPrograms::load(const KernelCache& cache, const std::string& core_btf,
                          std::future<RingSet> first_ring) {
  AttachIds ids = cache.attach_ids(btf_attach_sections(skel_->obj));
  const ProgramSplit split = split_programs(skel_.get());
  const ProgramHalves& halves = split.halves;
  const std::array<size_t, 2>& sizes = split.instructions;
  select_no_program(skel_.get());
  // Opened while the tables are made.
  auto opening = std::async(std::launch::async, [&halves, &core_btf, &ids] {
    return open_halves(halves, core_btf, ids);
  });
  uint64_t t0 = monotonic_ns();
  std::future<RingSet> installed = make_tables(std::move(first_ring));
  uint64_t t1 = monotonic_ns();
  loaders_ = opening.get();
  for (auto& loader : loaders_) loader->share_tables(skel_.get());
  uint64_t t2 = monotonic_ns();
  auto took = load_and_attach_halves();
  uint64_t t3 = monotonic_ns();
  if (installed.valid()) {
    first_rings_ = installed.get();
    rings_in_slot_[0] = static_cast<unsigned>(first_rings_.rings.size());
  }
  spdlog::debug(
      "BPF tables made in {:.1f} ms, the halves opened {:.1f} ms later; programs loaded{} in "
      "{:.1f} ms (halves of {} and {} instructions: {:.1f} and {:.1f} ms); the first ring "
      "installed {:.1f} ms later",
      (t1 - t0) / 1e6, (t2 - t1) / 1e6, attached_ ? " and attached" : "", (t3 - t2) / 1e6, sizes[0],
      sizes[1], took[0] / 1e6, took[1] / 1e6, (monotonic_ns() - t3) / 1e6);
  log_verified_instructions(loaders_);
}

KernelPrograms::KernelPrograms(const ProbePlan& plan, const KernelCache& cache,
                               const std::string& core_btf, std::future<RingSet> first_ring,
                               bool attach)
    : plan_(plan), attached_(attach) {
  uint64_t t0 = monotonic_ns();
  open(core_btf);
  spdlog::debug("BPF object opened in {:.1f} ms", (monotonic_ns() - t0) / 1e6);
  load(cache, core_btf, std::move(first_ring));
}

KernelPrograms::~KernelPrograms() {
  // The skeleton's own teardown would unhook the programs one after the other.
  try {
    detach();
  } catch (const std::exception& e) {
    spdlog::warn("unhooking the BPF programs: {}", e.what());
  }
}

int KernelPrograms::map_fd(const char* name) const {
  int fd = bpf_object__find_map_fd_by_name(skel_->obj, name);
  if (fd < 0) fail("the BPF object has no map {}", name);
  return fd;
}

uint32_t KernelPrograms::live_id(unsigned slot) const {
  if (slot >= kMaxSessions || !ids_[slot]) fail("no recording session in slot {}", slot);
  return ids_[slot];
}

unsigned KernelPrograms::sessions() const {
  unsigned n = 0;
  for (uint32_t id : ids_) n += id != 0;
  return n;
}

size_t KernelPrograms::traced_entries() const {
  size_t n = 0;
  for_each_key(map_fd("traced"), [&](uint32_t) { ++n; });
  return n;
}

// The first slot no session holds or is reserved.
unsigned KernelPrograms::free_slot() const {
  unsigned slot = 0;
  while (slot < kMaxSessions && (ids_[slot] || reserved_[slot])) ++slot;
  if (slot == kMaxSessions) fail("all {} recording sessions are in use", kMaxSessions);
  return slot;
}

KernelPrograms::Session KernelPrograms::open_session(uint64_t ring_bytes, UniqueFd ring) {
  check_ring_buffer_size(ring_bytes);
  unsigned slot = free_slot();
  RingSet set;
  set.ring_bytes = ring_bytes;
  set.rings.push_back(ring ? std::move(ring) : make_ring_buffer(ring_bytes));
  place_rings(slot, set.rings);
  return start_session(slot, std::move(set));
}

KernelPrograms::Session KernelPrograms::open_per_cpu(uint64_t total_bytes) {
  unsigned slot = free_slot();
  // The rings installed at load (the first session's, slot 0) need no install again.
  if (slot == 0 && !first_rings_.rings.empty()) return start_session(slot, std::move(first_rings_));
  RingSet set = make_ring_set(total_bytes);
  place_rings(slot, set.rings);
  return start_session(slot, std::move(set));
}

unsigned KernelPrograms::reserve_slot() {
  unsigned slot = free_slot();
  reserved_[slot] = true;
  return slot;
}

RingSet KernelPrograms::install_rings(unsigned slot, uint64_t total_bytes, bool per_cpu) {
  RingSet set;
  if (per_cpu) {
    set = make_ring_set(total_bytes);
  } else {
    set.ring_bytes = total_bytes;
    set.rings.push_back(make_ring_buffer(total_bytes));
  }
  place_rings(slot, set.rings);
  return set;
}

// Installs ring in the slot's entry of the map of rings, after the slot's last ring has left it:
// that removal may still be under way on another thread (close_session). Only the slot's owner
// calls this (open_session, or install_ring on a reserved slot), so no other thread touches the
// slot's future meanwhile.
void KernelPrograms::place_rings(unsigned slot, const std::vector<UniqueFd>& rings) {
  if (ring_leaving_[slot].valid()) {
    // Failed: the old ring stayed installed until the new one replaces it (memory held longer).
    if (std::string error = ring_leaving_[slot].get(); !error.empty()) spdlog::warn("{}", error);
  }
  put_rings(map_fd("rings"), slot, rings);
  rings_in_slot_[slot] = static_cast<unsigned>(rings.size());
}

void KernelPrograms::remove_ring(unsigned slot) const {
  delete_ring_entries(map_fd("rings"), slot, std::max(rings_in_slot_[slot], 1u));
}

KernelPrograms::Session KernelPrograms::open_reserved(unsigned slot, RingSet rings) {
  if (slot >= kMaxSessions || !reserved_[slot]) fail("slot {} was not reserved", slot);
  if (rings.rings.empty() || rings.rings.size() != rings_in_slot_[slot]) {
    fail("slot {}: {} rings given, {} installed", slot, rings.rings.size(), rings_in_slot_[slot]);
  }
  reserved_[slot] = false;
  return start_session(slot, std::move(rings));
}

void KernelPrograms::unreserve_slot(unsigned slot) {
  if (slot < kMaxSessions) reserved_[slot] = false;
}

// The slot's ring is in the map of rings: the session's id makes the programs use it.
KernelPrograms::Session KernelPrograms::start_session(unsigned slot, RingSet rings) {
  uint64_t ring_bytes = rings.ring_bytes;
  // A generation above the slot: the id differs from every earlier session of the slot's.
  uint32_t id = (++generation_ << EZIO_SESSION_SLOT_BITS) | slot;
  reset_drops(map_fd("drops"), slot, id);
  take_shared_baseline(slot);
  skel_->bss->session_layers[slot] = layer_mask(all_layers());
  skel_->bss->wakeup_bytes[slot] = ring_bytes / 8;
  auto n = static_cast<unsigned>(rings.rings.size());
  skel_->bss->session_rings[slot] = n;
  for (unsigned r = 0; r < n; ++r) skel_->bss->woken_at[slot * EZIO_MAX_RINGS + r] = 0;
  // The ring first, then the id (bpf/common.bpf.h, session_ring).
  __atomic_store_n(&skel_->bss->session_ids[slot], id, __ATOMIC_SEQ_CST);
  ids_[slot] = id;
  quiesced_[slot] = false;
  return {slot, std::move(rings.rings), ring_bytes};
}

void KernelPrograms::set_layers(unsigned slot, const LayerSet& layers) {
  live_id(slot);
  // The session's recording starts here: eziotraced opens a spare session long before a client
  // takes it, and what the shared counters counted meanwhile is not the client's.
  take_shared_baseline(slot);
  __atomic_store_n(&skel_->bss->session_layers[slot], layer_mask(layers), __ATOMIC_SEQ_CST);
}

// The counters no session owns (the unattributed requests' table, the drops of no session) count
// since the programs loaded, and eziotraced's outlive many sessions: each reports its own change.
void KernelPrograms::take_shared_baseline(unsigned slot) {
  unattributed_at_start_[slot] = read_unattributed(map_fd("block_unattributed"));
  add_device_requests(unattributed_at_start_[slot]);
  global_drops_at_start_[slot] = read_drops(map_fd("drops"), kMaxSessions, 0);
}

bool KernelPrograms::claimed_by_live_session(uint32_t key, uint32_t id) const {
  ezio_traced held{};
  if (bpf_map_lookup_elem(map_fd("traced"), &key, &held) != 0) return false;
  unsigned slot = held.session & (kMaxSessions - 1);
  return held.session != id && held.session != 0 && ids_[slot] == held.session;
}

void KernelPrograms::trace_process(unsigned slot, pid_t pid) {
  uint32_t key = pid;
  uint32_t id = live_id(slot);
  // A process another session records (it inherited the entry of a recorded parent: eziotrace
  // itself recorded) stays that session's. An entry of a session closed meanwhile is no one's.
  if (claimed_by_live_session(key, id)) {
    fail(
        "process {} is recorded by another session already (is this eziotrace itself being "
        "recorded?)",
        pid);
  }
  ezio_traced value{EZIO_PENDING_EXEC, id};
  if (bpf_map_update_elem(map_fd("traced"), &key, &value, BPF_ANY) != 0) {
    fail("cannot add process {} to the traced set: {}", pid, errno_text(errno));
  }
}

void KernelPrograms::trace_running_process(unsigned slot, pid_t pid, int pidfd) {
  // No exec will activate it and give its thread a state (bpf/process.bpf.h): its TGID's filter
  // bit is set here, and state_missing makes its threads get their state at their next event
  // (bpf/task.bpf.h, traced_task), as a thread that could not get one at its fork does.
  auto& bits = skel_->bss->tgid_bits;
  constexpr uint64_t kBits = sizeof(bits) * 8;
  uint64_t bit = static_cast<uint64_t>(pid) % kBits;
  __atomic_fetch_or(&bits[bit / 64], uint64_t{1} << (bit % 64), __ATOMIC_SEQ_CST);
  __atomic_store_n(&skel_->bss->state_missing, 1, __ATOMIC_SEQ_CST);
  uint32_t key = pid;
  ezio_traced value{EZIO_ACTIVE, live_id(slot)};
  if (bpf_map_update_elem(map_fd("traced"), &key, &value, BPF_ANY) != 0) {
    fail("cannot add process {} to the traced set: {}", pid, errno_text(errno));
  }
  // Ended before it was added: no exit hook will remove its entry.
  pollfd ended{pidfd, POLLIN, 0};
  if (pidfd >= 0 && poll(&ended, 1, 0) == 1) bpf_map_delete_elem(map_fd("traced"), &key);
}

uint64_t KernelPrograms::programs_in_flight(unsigned slot) const {
  if (slot >= kMaxSessions) fail("no recording session slot {}", slot);
  return sum_in_flight(map_fd("in_flight"), slot);
}

size_t KernelPrograms::traced_processes(unsigned slot) const {
  return traced_of(map_fd("traced"), live_id(slot)).size();
}

SessionTotals KernelPrograms::totals(unsigned slot) const {
  uint32_t id = live_id(slot);
  SessionTotals t;
  int drops = map_fd("drops");
  t.lost = read_drops(drops, slot, id);
  t.lost_per_cpu = read_drops_per_cpu(drops, slot, id);
  t.rings = std::max(rings_in_slot_[slot], 1u);
  auto global = read_drops(drops, kMaxSessions, 0);
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    t.lost[l] += global[l] - std::min(global[l], global_drops_at_start_[slot][l]);
  }
  int devs = map_fd("target_devs");
  for (const auto& k : keys_where<ezio_dev_key>(devs, [&](auto& k) { return k.session == id; })) {
    t.devices.used.insert(k.dev);
  }
  int unattributed = map_fd("block_unattributed");
  t.devices.window = {unattributed_table_id(unattributed), unattributed_at_start_[slot],
                      read_unattributed(unattributed)};
  add_device_requests(t.devices.window.end);
  t.devices.unattributed = unattributed_since(t.devices.window.end, t.devices.window.start);
  t.lost[EZIO_LAYER_BLOCK] += unfinished_[slot];
  int reclaimed = map_fd("reclaimed");
  for (const auto& k :
       keys_where<ezio_tid_key>(reclaimed, [&](auto& k) { return k.session == id; })) {
    ezio_reclaimed v{};
    if (bpf_map_lookup_elem(reclaimed, &k, &v) == 0) t.reclaimed[k.tid] = v;
  }
  return t;
}

void KernelPrograms::quiesce_session(unsigned slot) {
  uint32_t id = live_id(slot);
  if (quiesced_[slot]) return;
  // A block request is recorded at its completion: those the application left in flight
  // (readahead, writeback it did not wait for) are waited for while the session records them.
  wait_requests_done(map_fd("block_reqs"), id, kBlockRequestWait);
  // The id first: from here no program enters the slot's gate, so no record, drop count or fork
  // joins the session; then the programs already in it are waited for (bpf/common.bpf.h).
  __atomic_store_n(&skel_->bss->session_ids[slot], 0u, __ATOMIC_SEQ_CST);
  if (!wait_in_flight(map_fd("in_flight"), slot)) {
    spdlog::debug(
        "session {}: programs still in flight after {} ms; waiting for an RCU grace "
        "period instead",
        slot, kInFlightWaitNs / 1'000'000);
    remove_ring(slot);
  }
  // Those still unfinished will complete with no session to record them: lost, and counted.
  unfinished_[slot] = unfinished_requests(map_fd("block_reqs"), id);
  quiesced_[slot] = true;
}

void KernelPrograms::close_session(unsigned slot, bool programs_ending) {
  uint32_t id = live_id(slot);
  quiesce_session(slot);
  forget_cgroup(slot);
  int traced = map_fd("traced");
  delete_keys(traced, traced_of(traced, id));
  int devs = map_fd("target_devs");
  delete_keys(devs, keys_where<ezio_dev_key>(devs, [&](auto& k) { return k.session == id; }));
  int reclaimed = map_fd("reclaimed");
  delete_keys(reclaimed,
              keys_where<ezio_tid_key>(reclaimed, [&](auto& k) { return k.session == id; }));
  ids_[slot] = 0;
  quiesced_[slot] = false;
  unfinished_[slot] = 0;
  // No program uses the ring any more, but the map of rings holds it (its memory) until it leaves
  // the map, which waits for a grace period: not on the caller's time. Programs about to be
  // destroyed free it with the map (that wait made the in-process end longer: docs/costs.md).
  if (programs_ending) return;
  // What fails is said by the thread that waits for it, when the slot is opened again.
  unsigned count = rings_in_slot_[slot];
  ring_leaving_[slot] = std::async(std::launch::async, [rings = map_fd("rings"), slot, count] {
    try {
      delete_ring_entries(rings, slot, count);
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  });
}

}  // namespace ezio::recorder
