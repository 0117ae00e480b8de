// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The BPF programs, loaded once (every layer of the plan) and attached, serving up to
// kMaxSessions recording sessions at once, each with its own ring buffer, process tree, drop
// counters and tables (bpf/common.bpf.h). Root only. eziotraced holds one for its lifetime; the
// in-process recorder one per recording (slot 0). Not thread-safe: one thread opens, uses and
// closes the sessions.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/load/kernel_source.h"
#include "recorder/load/ring_buffers.h"
#include "recorder/load/split_load.h"
#include "recorder/probe/probe.h"

struct bpf_map;
struct eziotrace;

namespace ezio::recorder {

class KernelCache;

class KernelPrograms {
 public:
  // `plan` (recorder/probe/probe.h) says which layer's programs load; core_btf, when not empty, is
  // the cut-down kernel BTF for the CO-RE relocations (recorder/probe/core_btf.h).
  // first_ring: the ring buffers of the first session (make_ring_set, on their way), installed in
  // slot 0 of the map of rings while the programs load: the install waits for an RCU grace period
  // (docs/costs.md), hidden in the load instead of added to the start (open_per_cpu then takes
  // them).
  // cache gives the attach points of the BTF-attached programs (recorder/probe/attach_ids.h).
  // attach: hooked at once (the in-process recorder), else by attach() (eziotraced).
  KernelPrograms(const ProbePlan& plan, const KernelCache& cache, const std::string& core_btf = {},
                 std::future<RingSet> first_ring = {}, bool attach = true);
  ~KernelPrograms();
  KernelPrograms(const KernelPrograms&) = delete;
  KernelPrograms& operator=(const KernelPrograms&) = delete;

  struct Session {
    unsigned slot = 0;
    // BPF_MAP_TYPE_RINGBUF: mmap-able by whoever holds them (RingReader), no bpf(). Records
    // written on CPU c are in rings[c % rings.size()].
    std::vector<UniqueFd> rings;
    uint64_t ring_bytes = 0;  // each ring's
  };
  // A free slot with a new ring buffer of ring_bytes (a power of two, at least a page; sessions'
  // sizes may differ). Fails (ezio::Error) when all slots are taken.
  // ring: one made by make_ring_buffer(ring_bytes) beforehand, else it is made here.
  // The session has that one ring (the tests'; eziotraced makes its rings in steps, below).
  Session open_session(uint64_t ring_bytes, UniqueFd ring = {});
  // A free slot with one ring per CPU (make_ring_set: total_bytes in all), or those made at load.
  Session open_per_cpu(uint64_t total_bytes);
  // open_session in steps, for a caller that leaves the slow one to another thread (eziotraced,
  // whose loop must not wait for the kernel): reserve_slot() holds a free slot (fails as
  // open_session does); install_rings() makes the slot's rings (one per CPU as make_ring_set lays
  // them out, or one of total_bytes when !per_cpu) and installs them in the map of rings (their
  // memory and an RCU grace period; thread-safe: only the kernel and the reserved slot's own
  // state are touched, after the slot's last rings have left the map); open_reserved() opens the
  // session with them. A slot whose rings are not opened goes back with unreserve_slot(), after
  // remove_ring() (thread-safe, a grace period) if they were installed.
  unsigned reserve_slot();
  RingSet install_rings(unsigned slot, uint64_t total_bytes, bool per_cpu = true);
  void remove_ring(unsigned slot) const;
  Session open_reserved(unsigned slot, RingSet rings);
  void unreserve_slot(unsigned slot);
  // The layers the session records (the syscall and process layers always): none of the others'
  // records enter its ring. A new session records every layer loaded. Before trace_process. Its
  // unattributed and not-issued block counts start from here too (a spare session of eziotraced's
  // is opened long before a client takes it).
  void set_layers(unsigned slot, const LayerSet& layers);
  // pid (stopped before its exec) joins the session's tree, recorded from its execve on. Fails
  // when another open session records pid already: a session claims untraced processes only.
  void trace_process(unsigned slot, pid_t pid);
  // pid, past its exec, joins the session's tree active: recorded from now on. pidfd (its
  // pidfd_open) tells whether it ended meanwhile; its entry then goes (its exit was not seen).
  void trace_running_process(unsigned slot, pid_t pid, int pidfd);
  size_t traced_processes(unsigned slot) const;
  // The flight recorder (bpf/flight.bpf.h): the processes of uid that enter the cgroup v2 of id
  // cgroup_id, at level (its depth below the root), or a cgroup below it (a fork inside, a move
  // into it) join the slot's session; those there already are added with
  // trace_running_process. One cgroup per session; the entry goes with the session
  // (close_session).
  void record_cgroup(unsigned slot, uint64_t cgroup_id, unsigned level, uint32_t uid);
  // pid, running, joins the slot's session unless another live session records it (false then,
  // or when it has ended).
  bool enroll_running_process(unsigned slot, pid_t pid);
  // Of an open session (read them before close_session).
  SessionTotals totals(unsigned slot) const;
  // Nothing more is written for the session once this returns (its records, drop counts,
  // devices, reclaims, forks: what is in its ring stays readable through the ring fd), the
  // programs still hooked: its id is cleared, then the programs in flight for its slot are
  // waited for (bpf/common.bpf.h, in_flight: microseconds). Should some stay in flight too long
  // (a preempted program), its ring leaves the map of rings instead, which waits for every
  // program that could still see it (the kernel's RCU grace period). Once per session,
  // before close_session.
  void quiesce_session(unsigned slot);
  // The programs writing for the slot's session at this instant (0 once it is quiesced, unless a
  // program failed to leave the gate: what the tests check).
  uint64_t programs_in_flight(unsigned slot) const;
  // Ends the session (quiesce_session, unless done): its processes leave the traced table; its
  // table entries go, the slot can be reused. Its ring leaves the map of rings on another thread
  // (that waits for a grace period), before the slot is opened again; or with the map of rings
  // when programs_ending (the programs are destroyed next: the in-process recorder).
  void close_session(unsigned slot, bool programs_ending = false);
  // Hooks every program (again, after a detach): eziotraced, whose programs cost every process
  // of the machine their time while attached, attaches them while a session needs them only.
  // Not while another thread detaches them.
  void attach();
  // Unhooks every program (the in-process path at its end; the destructor does it too). The maps
  // stay readable. Touches only the links: may run on another thread than the sessions' (not
  // meanwhile with attach()).
  void detach();
  bool attached() const { return attached_; }
  // Once detached: empties the tables of operations in flight (block requests, VFS and FS calls)
  // that began while the programs were attached, whose ends no program saw.
  void forget_in_flight() const;
  const ProbePlan& plan() const { return plan_; }
  // The loaded programs, by name, each with its fd (owned here): what the tests inspect.
  std::vector<std::pair<std::string, int>> loaded_programs() const;
  // Sessions open now, and the traced table's entries of every session.
  unsigned sessions() const;
  size_t traced_entries() const;

 private:
  // The skeleton, opened with the plan applied. It makes the tables (the first ring installed
  // meanwhile) while the two halves of its programs are opened on another thread; they load next,
  // at once (recorder/load/split_load.h).
  void open(const std::string& core_btf);
  void load(const KernelCache& cache, const std::string& core_btf, std::future<RingSet> first_ring);
  std::future<RingSet> make_tables(std::future<RingSet> first_ring);
  std::array<uint64_t, 2> load_and_attach_halves();
  void put_syscall_body(const char* name, const bpf_map* table);
  uint32_t live_id(unsigned slot) const;
  unsigned free_slot() const;
  void place_rings(unsigned slot, const std::vector<UniqueFd>& rings);
  Session start_session(unsigned slot, RingSet rings);
  bool claimed_by_live_session(uint32_t pid, uint32_t id) const;
  int map_fd(const char* name) const;
  void forget_cgroup(unsigned slot);
  void take_shared_baseline(unsigned slot);

  Skeleton skel_;        // the tables' owner: no program of its own
  HalfLoaders loaders_;  // the programs (their links)
  ProbePlan plan_;
  std::array<uint32_t, kMaxSessions> ids_{};   // each slot's live session id, 0: free
  std::array<bool, kMaxSessions> quiesced_{};  // quiesce_session done for the slot's session
  // Block requests of the slot's quiesced session that had not completed: lost.
  std::array<uint64_t, kMaxSessions> unfinished_{};
  // The table of unattributed block requests as each slot's session found it at its start.
  std::array<std::map<uint32_t, UnattributedIo>, kMaxSessions> unattributed_at_start_{};
  // The drops of no session (bpf/common.bpf.h, count_global_drop) as each slot's session found
  // them.
  std::array<std::array<uint64_t, EZIO_LAYER_COUNT>, kMaxSessions> global_drops_at_start_{};
  std::array<bool, kMaxSessions> reserved_{};            // reserve_slot: not free, not open yet
  std::array<uint64_t, kMaxSessions> flight_cgroups_{};  // record_cgroup's, 0: none
  std::array<unsigned, kMaxSessions> flight_levels_{};   // their levels
  RingSet first_rings_;  // installed in slot 0 at load, not yet taken by open_per_cpu
  std::array<unsigned, kMaxSessions> rings_in_slot_{};  // entries of the map of rings in use
  bool attached_ = true;
  uint32_t generation_ = 0;
  // A closed session's ring leaving the map of rings, per slot. After skel_: done before the
  // programs' maps are destroyed.
  std::array<std::future<std::string>, kMaxSessions> ring_leaving_;  // "" or what failed
};

// Probes the hooks for `layers` (or takes what an earlier recording found:
// recorder/probe/kernel_cache.h), then loads and attaches the programs. When what was kept fails to
// load, the kernel changed in a way the cache's key does not see: it is forgotten and the kernel
// probed again.
// first_ring: see KernelPrograms (given to the first attempt only). attach: see KernelPrograms.
std::unique_ptr<KernelPrograms> load_kernel_programs(const LayerSet& layers, bool use_cache,
                                                     std::future<RingSet> first_ring = {},
                                                     bool attach = true);

}  // namespace ezio::recorder
