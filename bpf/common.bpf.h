// SPDX-License-Identifier: GPL-2.0-only
/* Maps and helpers shared by every layer's programs. Included once, by eziotrace.bpf.c. */
#ifndef EZIO_COMMON_BPF_H
#define EZIO_COMMON_BPF_H

#include "vmlinux.h"
/* After the kernel's types, which it uses. */
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "record.h"
#include "rings.h"

char LICENSE[] SEC("license") = "GPL";

/* Recording sessions (record.h, EZIO_MAX_SESSIONS). The recorder (recorder/load/
 * kernel_programs.cpp) writes these through the mmap of .bss: the id of the live session of each
 * slot (0: free), and the unread bytes above which a submit wakes that session's reader. Below
 * the mark the reader finds the records at its next poll tick: one wake-up per record would cost
 * more than the record itself. */
__u32 session_ids[EZIO_MAX_SESSIONS] = {};
__u64 wakeup_bytes[EZIO_MAX_SESSIONS] = {};
/* The layers each slot's session records (bit 1 << EZIO_LAYER_x), written by the recorder before
 * the session traces a process: a session that asked for fewer layers than the programs hook gets
 * no records of the others, and its threads skip the VFS and FS layers' work (traced_task). */
__u32 session_layers[EZIO_MAX_SESSIONS] = {};
/* The rings of each slot's session (0 or 1: one), written by the recorder before the session's
 * id. */
__u32 session_rings[EZIO_MAX_SESSIONS] = {};

/* The mask is applied where the slot is used (barrier_var): clang would otherwise keep one masked
 * value, spill it around a helper call, and the verifier, reloading it, no longer knows its bound
 * ("unbounded memory access"). */
static __always_inline __u32 session_slot(__u32 session) {
  barrier_var(session);
  return session & (EZIO_MAX_SESSIONS - 1);
}

/* Whether session is the live session of its slot (not a closed one whose slot was reused). A
 * filter only: what a program then writes for the session passes the gate below. */
static __always_inline bool session_live(__u32 session) {
  return session && session_ids[session_slot(session)] == session;
}

/* Programs in flight for each session slot, per CPU: between enter_session and leave_session.
 * Everything a program writes for a session that the recorder reads when the session ends (its
 * records, its drop counts, its devices and reclaims, a fork joining its tree) is written inside
 * this gate. Ending a session (KernelPrograms::quiesce_session) clears the slot's id, then waits
 * until the slot's counters, summed over CPUs, read 0: from then on no program writes for the
 * session, whose ring and counters can be read in full. A program enters by an atomic add, a full
 * barrier, BEFORE it reads the id; the recorder clears the id (sequentially consistent) BEFORE it
 * reads the counters: either the program sees the id cleared and writes nothing, or the recorder
 * sees it in flight and waits (a store then a load on each side: x86 reorders exactly that
 * without the barrier). A program runs on one CPU from its start to its end (migration is
 * disabled), so each CPU's counter is balanced; programs nested on a CPU (an interrupt's) or
 * interleaved there (a preempted fentry program's) only add and subtract, atomically, and may
 * enter the gate again inside it. Per CPU, the counters cost no cache line bouncing between
 * writers. This replaced an RCU grace period (5-20 ms) waited at every session's end. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, EZIO_MAX_SESSIONS);
  __type(key, __u32);
  __type(value, __u64);
} in_flight SEC(".maps");

/* Enters the gate for session: true when it is live, then the caller must leave_session(session)
 * on every path; false (nothing to leave) when it is not. */
static __always_inline bool enter_session(__u32 session) {
  if (!session) return false;
  __u32 slot = session_slot(session);
  __u64* n = bpf_map_lookup_elem(&in_flight, &slot);
  if (!n) return false;
  /* The fetching form: fully ordered in BPF's memory model (the plain atomic add is not, though
   * x86's JIT makes both a locked instruction). */
  __u64 before = __sync_fetch_and_add(n, 1);
  barrier_var(before);
  if (session_ids[session_slot(session)] == session) return true;
  __sync_fetch_and_sub(n, 1);
  return false;
}

static __always_inline void leave_session(__u32 session) {
  __u32 slot = session_slot(session);
  __u64* n = bpf_map_lookup_elem(&in_flight, &slot);
  if (!n) return;
  /* Fetching too: ordered after the writes it closes. */
  __u64 before = __sync_fetch_and_sub(n, 1);
  barrier_var(before);
}

/* Whether session records layer. The syscall layer (the anchor the others nest in) and the
 * process layer (the tree's bookkeeping) are every session's. */
static __always_inline bool session_wants(__u32 session, __u32 layer) {
  if (layer == EZIO_LAYER_SYSCALL || layer == EZIO_LAYER_PROCESS) return true;
  return (session_layers[session_slot(session)] >> (layer & 31)) & 1;
}

/* A session's ring buffers (1 to EZIO_MAX_RINGS, session_rings[slot]) at entries
 * slot * EZIO_MAX_RINGS + r, created and sized by the recorder when the session opens: what a
 * process of one session records can only enter that session's rings, and one session's full
 * ring costs no other session its events. A record goes to the ring of the CPU it is written on
 * (ring_entry): a ring's reservation takes the ring's spinlock, which CPUs sharing one ring
 * contend for. */
struct ezio_ring {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096); /* the template only: each session's ring has its own size */
};

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, EZIO_MAX_SESSIONS * EZIO_MAX_RINGS);
  __type(key, __u32);
  __array(values, struct ezio_ring);
} rings SEC(".maps");

/* Events that could not be recorded, per session slot and layer (slot * EZIO_LAYER_COUNT + layer):
 * ring buffer full or missing, or a tracking table full. The last EZIO_LAYER_COUNT entries count
 * what belongs to no session (the per-device unattributed counts every session reports). Each
 * counter is one word, the session id it counts for in the high half, the
 * count in the low half: the recorder sets a slot's counters to the new session's id before the
 * session opens, and a program adds to a counter only while it still names the session it counts
 * for, in one compare-and-swap. A late program of a closed session then never adds to the next
 * session of the slot, whatever the timing. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, (EZIO_MAX_SESSIONS + 1) * EZIO_LAYER_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

/* Processes (TGIDs) of the sessions' trees. The launched child enters as PENDING and becomes
 * ACTIVE when it execs, so the launcher's own pre-exec work is never recorded; its children
 * inherit its entry, session included. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  /* Filled at forks only: allocated as it grows, not 5 MB cleared at every start. */
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32);
  __type(value, struct ezio_traced);
} traced SEC(".maps");

/* Adds one to the counter at key if it counts for session (0: no session's). Per CPU, so the
 * swap only fails when the recorder reset the counter meanwhile (or a nested program on this CPU
 * added first: one count missed). A full counter stays full. */
static __always_inline void count_drop_at(__u32 key, __u32 session) {
  __u64* n = bpf_map_lookup_elem(&drops, &key);
  if (!n) return;
  __u64 old = *n;
  if ((old >> 32) != session || (__u32)old == 0xffffffffu) return;
  __sync_val_compare_and_swap(n, old, old + 1);
}

/* An event of session lost (none counted for a session that has closed meanwhile). A global
 * (noinline) function, checked once by the verifier instead of inside each of its ~40 callers:
 * inlined with its gate, it made the programs 60 % larger and their load ~20 ms longer. Off the
 * recording path (a loss), the call costs nothing there. The gate itself stays inline: a call
 * per record would cost a return (slow under the host's SRSO mitigation) on the hot path. */
__noinline int count_drop(__u32 session, __u32 layer) {
  if (!enter_session(session)) return 0;
  count_drop_at(session_slot(session) * EZIO_LAYER_COUNT + layer, session);
  leave_session(session);
  return 0;
}

/* An event of session lost inside its gate (enter_session), which this leaves: the record that
 * found no ring or no room. Global, as count_drop. */
__noinline int lose_and_leave(__u32 session, __u32 layer) {
  count_drop_at(session_slot(session) * EZIO_LAYER_COUNT + layer, session);
  leave_session(session);
  return 0;
}

/* An event of no session lost. */
static __always_inline void count_global_drop(__u32 layer) {
  count_drop_at(EZIO_MAX_SESSIONS * EZIO_LAYER_COUNT + layer, 0);
}

/* The session of a process whose exec made it active, 0 if none. */
static __always_inline __u32 traced_session(__u32 tgid) {
  struct ezio_traced* tr = bpf_map_lookup_elem(&traced, &tgid);
  return tr && tr->state == EZIO_ACTIVE && session_live(tr->session) ? tr->session : 0;
}

/* The entry of the map of rings that session's records written on this CPU go to. A program runs
 * on one CPU from start to end (migration disabled): every lookup of one record finds the same
 * ring. */
static __always_inline __u32 ring_entry(__u32 session) {
  __u32 slot = session_slot(session);
  __u32 n = session_rings[slot];
  __u32 r = n > 1 ? bpf_get_smp_processor_id() % n : 0;
  return slot * EZIO_MAX_RINGS + (r & (EZIO_MAX_RINGS - 1));
}

/* The ring buffer of session, NULL when the session is not live (nothing counted: a closed
 * session's events are no one's) or has no ring (counted lost). The one gate of every record: a
 * ring returned is inside enter_session, which the caller leaves once the record is written
 * (submit_sized, or after bpf_ringbuf_output) or lost (counted). */
static __always_inline void* session_ring(__u32 session, __u32 layer) {
  if (!enter_session(session)) return 0;
  if (!session_wants(session, layer)) { /* a layer the session did not ask for */
    leave_session(session);
    return 0;
  }
  /* Looked up inside the gate, after the id: a slot's ring changes only when the slot opens for
   * a new session (its ring installed before its id) or after its session ended (quiesced, which
   * waits for this program): the ring found is this session's. */
  __u32 entry = ring_entry(session);
  void* ring = bpf_map_lookup_elem(&rings, &entry);
  if (!ring) lose_and_leave(session, layer);
  return ring;
}

/* A record of size bytes in session's ring buffer, NULL (counted lost) when it has no room. A
 * record returned is inside the session's gate: every one ends in submit_sized (the verifier makes
 * each reserved record end in a submit or a discard, and nothing else submits or discards). */
static __always_inline void* reserve(__u32 session, __u64 size, __u32 layer) {
  void* ring = session_ring(session, layer);
  if (!ring) return 0;
  void* rec = bpf_ringbuf_reserve(ring, size, 0);
  if (!rec) lose_and_leave(session, layer);
  return rec;
}

/* The consumer position (+1) at which each ring's reader was last woken (by entry of the map of
 * rings). A wake-up is an
 * inter-processor interrupt (a VM exit under virtualisation, several µs): while the reader is
 * behind, waking it at every record past the mark made the application pay one per record (15%
 * of the CPU of 8 fio writers), when one per drain is enough. The reader re-arms the latch by
 * reading (its position moves), which needs no write into the programs' memory: a reader that
 * only holds the ring's fd (eziotraced's client) can do it. */
__u64 woken_at[EZIO_MAX_SESSIONS * EZIO_MAX_RINGS] = {};

/* Unread bytes are asked of the ring (a helper call, whose return the host's SRSO mitigation makes
 * slow) once per EZIO_WAKE_CHECK_BYTES of records per thread on the hot paths (unqueried: the
 * thread's count of bytes submitted since it last asked, in its task state), at every record
 * elsewhere. A wake-up comes at most that many bytes per thread past the mark. */
#define EZIO_WAKE_CHECK_BYTES 4096

static __always_inline void submit_sized(__u32 session, void* rec, __u64 size, __u32* unqueried) {
  __u64 flags = BPF_RB_NO_WAKEUP;
  if (unqueried) {
    *unqueried += size;
    if (*unqueried < EZIO_WAKE_CHECK_BYTES) {
      bpf_ringbuf_submit(rec, flags);
      leave_session(session);
      return;
    }
    *unqueried = 0;
  }
  __u32 entry = ring_entry(session);
  void* ring = bpf_map_lookup_elem(&rings, &entry);
  if (ring && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes[session_slot(session)]) {
    __u64 mark = bpf_ringbuf_query(ring, BPF_RB_CONS_POS) + 1;
    __u64* woken = &woken_at[entry & (EZIO_MAX_SESSIONS * EZIO_MAX_RINGS - 1)];
    if (*woken != mark) {
      *woken = mark; /* two CPUs may both wake it: harmless */
      flags = BPF_RB_FORCE_WAKEUP;
    }
  }
  bpf_ringbuf_submit(rec, flags);
  leave_session(session);
}
/* Commits record r to session's ring, waking the session's reader once the unread bytes pass its
 * mark; submit_task(t, r): the record of traced thread t (struct ezio_task), into its session's. */
#define submit(session, r) submit_sized(session, r, sizeof(*(r)), 0)
#define submit_task(t, r) submit_sized((t)->session, r, sizeof(*(r)), &(t)->unqueried)

static __always_inline void fill_header(struct ezio_header* h, __u8 kind, __u8 layer, __u32 size,
                                        __u32 pid, __u32 tid) {
  h->version = EZIO_RECORD_VERSION;
  h->kind = kind;
  h->layer = layer;
  h->size = size;
  h->pid = pid;
  h->tid = tid;
}

#endif
