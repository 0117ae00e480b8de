// SPDX-License-Identifier: GPL-2.0-only
/* Per-thread state of the target's threads, in one task-local storage: the syscall in flight, the
 * page-cache counters and the files the VFS layer resolved last. A thread gets its storage
 * when it is created in an active traced process, or when its exec activates its process, so
 * finding it answers "is this thread traced?" and gives its state in one lookup: a hash of TGIDs
 * plus one table per layer cost a lookup each on every hook, which is what the recording's
 * overhead is made of. */
#ifndef EZIO_TASK_BPF_H
#define EZIO_TASK_BPF_H

#include "common.bpf.h"

struct inflight_call {
  __u64 t_enter;
  __u64 args[8]; /* 6 syscall arguments; 8 so that args[i & 7] needs no bounds check */
  __u64 call_id;
  __u32 nr;
  __u32 active; /* 1 between sys_enter and sys_exit */
};

struct pc_state {
  __u32 seen;      /* the thread touched the page cache: it gets a last snapshot at exit */
  __u32 unclocked; /* page-cache events counted without a clock read (pagecache.bpf.h) */
  __u64 last_sent;
  __u64 pending_added; /* pages added since the read path last looked up a batch */
  __u64 accessed, hits, added, readahead, faults, mapped_around, dirtied, evicted, created;
  __u64 owned_inode; /* the inode this thread was last noted as owner of (pagecache.bpf.h) */
  /* The inode this thread was last noted as dirtier of, and in which call (pagecache.bpf.h). */
  __u64 dirtied_inode, dirtied_call;
};

/* A dirty-throttling pause in progress (pagecache.bpf.h): start == 0 when none. */
struct pc_throttle {
  __u64 start, call_id, pause, dirtied;
  __u32 asleep; /* the thread switched out after the tracepoint: its next switch-in ends it */
  __u32 pad;
  char bdi[EZIO_BDI_NAME_LEN];
};

/* What the VFS layer read from the files a thread used last, in slots chosen by the struct file
 * address (struct files are 256-byte slab objects: bits 8 and up tell neighbours apart): a thread
 * calls on the same few files again and again (dd alternates between its input and its output). The
 * inode never changes while the file lives, and the inode pointer is compared too, so a struct file
 * freed and reused for another file is caught. */
#define EZIO_FILE_SLOTS 8

struct file_cache {
  __u64 file;
  __u64 inode;
  __u64 ino;
  __u32 dev;
  __u32 sent; /* ezio_send_file accepted this file: its path is in the ring buffer */
  char fstype[EZIO_FSTYPE_LEN];
};

/* The per-page FS tracepoint hits of the current call, merged while they continue each other on
 * one file (fs.bpf.h); sent with the call's record at its exit. */
struct fs_run {
  struct ezio_fs_part part; /* part.hits == 0: no run */
  __u64 call_id;
  __u64 inode; /* struct inode *: extending the run needs no read of the inode */
};

/* Call ids are made per thread, without an atomic on a counter every CPU shares (a cache line
 * bouncing between the CPUs of a multi-threaded application at every syscall): the high bits are
 * the thread's number, drawn once from a global counter when its state is created, the low bits
 * count its calls. Ids stay unique in the recording and increase along each thread, which is what
 * the recorder relies on (recorder/archive/span_nesting.cpp). */
#define EZIO_CALL_SEQ_BITS 36

struct ezio_task {
  /* The session the thread records into (record.h): a hook finds it in the state it needs anyway,
   * without another lookup. */
  __u32 session;
  __u32 unqueried; /* bytes submitted since the ring was last asked for its unread bytes */
  __u64 last_call_id;
  struct inflight_call call;
  struct fs_run fs_run;
  struct pc_state pc;
  struct pc_throttle throttle;
  struct file_cache files[EZIO_FILE_SLOTS];
};

static __always_inline struct file_cache* file_slot(struct ezio_task* t, __u64 file) {
  return &t->files[(file >> 8) & (EZIO_FILE_SLOTS - 1)];
}

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct ezio_task);
} tasks SEC(".maps");

__u64 next_thread_number = 0;

static __always_inline __u64 thread_call_base(void) {
  return (__sync_fetch_and_add(&next_thread_number, 1) + 1) << EZIO_CALL_SEQ_BITS;
}

/* One bit per TGID, modulo EZIO_TGID_BITS, for the processes this recording traces; bits are never
 * cleared (a reused TGID only costs the state lookup below). Every hook runs for every thread on
 * the machine: the bit turns the other processes away with one load, where a failed task-storage
 * lookup and a lookup in the traced table cost them ~90 ns per syscall (bench/hooks: helper calls
 * whose returns the host's SRSO mitigation makes slow, and a cache miss in a 1 MiB bucket array).
 */
#define EZIO_TGID_BITS (1u << 18)
__u64 tgid_bits[EZIO_TGID_BITS / 64] = {};

static __always_inline __u64* tgid_word(__u32 tgid) {
  return &tgid_bits[(tgid / 64) % (EZIO_TGID_BITS / 64)];
}

static __always_inline void mark_traced_tgid(__u32 tgid) {
  __sync_fetch_and_or(tgid_word(tgid), 1ull << (tgid % 64));
}

static __always_inline bool tgid_may_be_traced(struct task_struct* task) {
  __u32 tgid = task->tgid;
  return *tgid_word(tgid) & (1ull << (tgid % 64));
}

/* Set when a traced thread could not get its state at fork or exec (no memory): from then on the
 * hooks fall back to looking its process up in the traced table. Otherwise a thread without state
 * is not traced. */
__u32 state_missing = 0;

static __always_inline struct ezio_task* new_task_state(struct task_struct* task, __u32 session) {
  struct ezio_task* t = bpf_task_storage_get(&tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!t) return 0;
  if (!t->last_call_id) t->last_call_id = thread_call_base();
  t->session = session;
  return t;
}

/* Gives task, a thread of a traced and active process of session, its state: at its fork, or at
 * the exec that activates its process, so that it exists before the thread's first traced event. */
static __always_inline void create_task_state(struct task_struct* task, __u32 session,
                                              __u32 layer) {
  mark_traced_tgid(task->tgid);
  if (!new_task_state(task, session)) {
    count_drop(session, layer);
    state_missing = 1;
  }
}

/* Whether a traced thread of session does layer's work. The page cache and block hooks keep the
 * attribution of block requests (to the thread that issued them or dirtied their pages) for every
 * session, the records of a layer not asked for being refused at the ring's gate: a request left
 * unattributed would count in every other session's per-device figures. */
static __always_inline bool task_wants(__u32 session, __u32 layer) {
  return layer == EZIO_LAYER_BLOCK || layer == EZIO_LAYER_PAGECACHE ||
         session_wants(session, layer);
}

/* The current thread's state if it is traced by a live session that records layer, else NULL.
 * A state left by a closed session stays with its thread (task storage goes with the task) but
 * answers no more. */
static __always_inline struct ezio_task* traced_task(__u32 layer) {
  struct task_struct* task = bpf_get_current_task_btf();
  if (!tgid_may_be_traced(task)) return 0;
  struct ezio_task* t = bpf_task_storage_get(&tasks, task, 0, 0);
  if (t) return session_live(t->session) && task_wants(t->session, layer) ? t : 0;
  if (!state_missing) return 0;
  __u32 session = traced_session(task->tgid);
  if (!session || !task_wants(session, layer)) return 0;
  t = new_task_state(task, session);
  if (!t) count_drop(session, layer); /* still no memory for the state: the event is lost */
  return t;
}

/* The id of the thread's next call. */
static __always_inline __u64 next_call_id(struct ezio_task* t) {
  __u64 id = ++t->last_call_id;
  /* 2^36 calls in one thread (19 hours at one per µs): a new thread number keeps ids unique */
  if (!(id & ((1ull << EZIO_CALL_SEQ_BITS) - 1))) t->last_call_id = id = thread_call_base() + 1;
  return id;
}

static __always_inline __u64 arg_or(const struct inflight_call* c, __u8 idx, __u64 dflt) {
  return idx == EZIO_NO_ARG ? dflt : c->args[idx & 7];
}

/* The call_id of the syscall the current thread is in, 0 if none. */
static __always_inline __u64 call_id_of(const struct ezio_task* t) {
  return t->call.active ? t->call.call_id : 0;
}

#endif
