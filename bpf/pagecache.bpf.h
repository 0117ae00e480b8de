// SPDX-License-Identifier: GPL-2.0-only
/* Page-cache layer: per traced thread, pages looked up, hit, added (misses and readahead), mapped
 * by faults, dirtied and evicted, from the filemap and writeback tracepoints, which run in the
 * context of the thread doing the work. Counters live in the kernel; a snapshot record goes out at
 * most every EZIO_PAGECACHE_PERIOD_NS per thread and when the thread exits, so a 100 MiB buffered
 * write costs a few hundred records, not one per page. */
#ifndef EZIO_PAGECACHE_BPF_H
#define EZIO_PAGECACHE_BPF_H

#include "attribution.bpf.h"
#include "common.bpf.h"

/* The counters live in the thread's state (task.bpf.h): the current thread's if it is traced,
 * marked as having touched the page cache. */
static __always_inline struct ezio_task* pc_task(void) {
  struct ezio_task* t = traced_task(EZIO_LAYER_PAGECACHE);
  if (t) t->pc.seen = 1;
  return t;
}

static __always_inline void pc_send(struct ezio_task* t, __u64 now) {
  struct pc_state* s = &t->pc;
  struct ezio_pagecache_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_PAGECACHE);
  if (!r) return;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  fill_header(&r->h, EZIO_REC_PAGECACHE, EZIO_LAYER_PAGECACHE, sizeof(*r), pid_tgid >> 32,
              (__u32)pid_tgid);
  r->ts = now;
  r->accessed = s->accessed;
  r->hits = s->hits;
  r->added = s->added;
  r->readahead = s->readahead;
  r->faults = s->faults;
  r->mapped_around = s->mapped_around;
  r->dirtied = s->dirtied;
  r->evicted = s->evicted;
  r->created = s->created;
  submit_task(t, r);
  s->last_sent = now;
}

/* Page-cache events between two reads of the clock inside one syscall (a power of two). */
#define EZIO_PC_UNCLOCKED_EVENTS 64

/* A snapshot when the last is a period old. The clock is read at a snapshot, not per page: inside
 * a traced syscall the call's start (read by its entry) tells whether the last snapshot is a
 * period old, and a long call (a 100 MiB write) reads the clock once every
 * EZIO_PC_UNCLOCKED_EVENTS events, so that it still sends one per period while it lasts. */
static __always_inline void pc_maybe_send(struct ezio_task* t) {
  struct pc_state* s = &t->pc;
  if (t->call.active && (++s->unclocked & (EZIO_PC_UNCLOCKED_EVENTS - 1)) &&
      (__s64)(t->call.t_enter - s->last_sent) < (__s64)EZIO_PAGECACHE_PERIOD_NS)
    return;
  __u64 now = bpf_ktime_get_ns();
  if (now - s->last_sent >= EZIO_PAGECACHE_PERIOD_NS) pc_send(t, now);
}

/* The traced thread that last brought an inode's pages into the cache or dirtied them: the one a
 * reclaim of those pages (by kswapd, or another process) takes them from. Keyed by inode pointer;
 * ino and dev guard against a freed inode's memory reused for another file. A quarter of
 * dirtiers' size: it only serves the reclaim counts, and an LRU's entries are zeroed at every
 * start. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u64);
  __type(value, struct ezio_dirtier);
} cache_owners SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  /* One entry per thread, added once: allocated as needed rather than cleared at start. */
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct ezio_tid_key); /* the owner's session: each reads its own at its end */
  __type(value, struct ezio_reclaimed);
} reclaimed SEC(".maps");

/* Notes the current traced thread as the owner of inode's cached pages (ino and dev: its
 * tp_inode_ident); the thread remembers the last inode it noted, so a run of pages of one file
 * costs one table update. */
static __always_inline void note_cache_owner(struct ezio_task* t, struct inode* inode, __u64 ino,
                                             __u32 dev) {
  if (t->pc.owned_inode == (__u64)inode) return;
  struct ezio_dirtier d = {};
  cause_of(t, &d.who);
  d.ino = ino;
  d.dev = dev;
  __u64 key = (__u64)inode;
  /* The table is an LRU: a full one forgets old owners, whose reclaims then go uncounted. */
  bpf_map_update_elem(&cache_owners, &key, &d, BPF_ANY);
  t->pc.owned_inode = (__u64)inode;
}

/* Pages evicted outside the traced tree: counted for the thread that owns them, if any. */
static __always_inline void count_reclaim(struct folio* folio) {
  struct ezio_cause owner;
  /* Off the traced threads' path: probe reads, which cost the verifier nothing. */
  struct address_space* m = BPF_CORE_READ(folio, mapping);
  if (!m || !find_inode_cause(&cache_owners, BPF_CORE_READ(m, host), &owner)) return;
  /* The session's totals list its reclaims: counted inside its gate (common.bpf.h, in_flight). */
  if (!enter_session(owner.session)) return;
  struct ezio_tid_key key = {.tid = owner.tid, .session = owner.session};
  struct ezio_reclaimed* r = bpf_map_lookup_elem(&reclaimed, &key);
  if (!r) {
    struct ezio_reclaimed fresh = {.pid = owner.pid};
    bpf_map_update_elem(&reclaimed, &key, &fresh, BPF_NOEXIST); /* or another CPU just did */
    r = bpf_map_lookup_elem(&reclaimed, &key);
  }
  if (r)
    __sync_fetch_and_add(&r->pages, folio_pages(folio));
  else /* the table is full */
    count_drop(owner.session, EZIO_LAYER_PAGECACHE);
  leave_session(owner.session);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ezio_pc_add, struct folio* folio) {
  /* Loaded before any branch, to be verified once (inode.bpf.h, tp_inode_ident). */
  struct address_space* m = folio->mapping;
  barrier_var(m);
  struct ezio_task* t = pc_task();
  if (!t) return 0;
  struct pc_state* s = &t->pc;
  struct inode* host = m ? m->host : 0;
  if (host) {
    __u64 ino;
    __u32 dev;
    tp_inode_ident(host, &ino, &dev);
    note_cache_owner(t, host, ino, dev);
  }
  __u64 n = folio_pages(folio);
  s->added += n;
  s->pending_added += n;
  pc_maybe_send(t);
  return 0;
}

/* The read path found (after any readahead it started) pages index..last_index in the cache:
 * those this thread just added were misses, the rest hits; what it added beyond the batch was
 * read ahead. */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(ezio_pc_get_pages, struct address_space* mapping, unsigned long index,
             unsigned long last_index) {
  struct ezio_task* t = pc_task();
  if (!t) return 0;
  struct pc_state* s = &t->pc;
  __u64 batch = last_index >= index ? last_index - index + 1 : 0;
  __u64 missed = s->pending_added < batch ? s->pending_added : batch;
  s->accessed += batch;
  s->hits += batch - missed;
  s->readahead += s->pending_added - missed;
  s->pending_added = 0;
  pc_maybe_send(t);
  return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(ezio_pc_fault, struct address_space* mapping, unsigned long index) {
  struct ezio_task* t = pc_task();
  if (!t) return 0;
  struct pc_state* s = &t->pc;
  s->faults += 1;
  /* Pages added since the last lookup were brought in by faults (the previous one's readahead,
   * exec): misses of mmap I/O, not readahead of the read path. misses is derived as
   * added - readahead - created, so forgetting them here is what classifies them. */
  s->pending_added = 0;
  pc_maybe_send(t);
  return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(ezio_pc_map_pages, struct address_space* mapping, unsigned long start,
             unsigned long last) {
  struct ezio_task* t = pc_task();
  if (!t) return 0;
  struct pc_state* s = &t->pc;
  if (last >= start) s->mapped_around += last - start + 1;
  pc_maybe_send(t);
  return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(ezio_pc_delete, struct folio* folio) {
  struct ezio_task* t = pc_task();
  if (!t) {
    count_reclaim(folio);
    return 0;
  }
  struct pc_state* s = &t->pc;
  s->evicted += folio_pages(folio);
  pc_maybe_send(t);
  return 0;
}

/* A clean folio became dirty (folio_account_dirtied): count it, and remember the inode's dirtier
 * for the block layer, which sees the writeback later, usually from a flusher kworker. */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(ezio_pc_dirty, struct folio* folio, struct address_space* mapping) {
  if (!mapping) return 0;
  struct inode* host = mapping->host; /* before any other branch: see ezio_pc_add */
  barrier_var(host);
  struct ezio_task* t = pc_task();
  if (!t) return 0;
  bool data = !host;
  if (host) {
    __u64 ino;
    __u32 dev;
    tp_inode_ident(host, &ino, &dev);
    data = private_pages_ino(host, host->i_mode, ino);
    /* Shared metadata pages get no dirtier: their writeback is no one process's. One update per
     * inode and call: the pages after the first one a call dirties name the same cause. */
    __u64 call = call_id_of(t);
    if (data && !(call && t->pc.dirtied_inode == (__u64)host && t->pc.dirtied_call == call)) {
      struct ezio_cause who;
      cause_of(t, &who);
      note_dirtier(host, ino, dev, &who);
      t->pc.dirtied_inode = (__u64)host;
      t->pc.dirtied_call = call;
    }
    note_cache_owner(t, host, ino, dev);
  }
  struct pc_state* s = &t->pc;
  __u64 n = folio_pages(folio);
  /* Dirtied counts data pages: a file system's own metadata (btrfs's btree, which a writer
   * dirties itself) is not what the application wrote. */
  if (data) s->dirtied += n;
  /* Pages a write just inserted are dirtied right away: they were created, not missed. */
  __u64 created = s->pending_added < n ? s->pending_added : n;
  s->created += created;
  s->pending_added -= created;
  pc_maybe_send(t);
  return 0;
}

/* Dirty-page throttling. balance_dirty_pages() fires its tracepoint before every sleep it imposes
 * on a writer (pause > 0, in jiffies), and also when it lets the writer go (pause <= 0). Its
 * arguments changed in 6.10 (the thresholds became a struct dirty_throttle_control): one program
 * per layout, the recorder loads the one whose argument count the kernel's BTF gives
 * (recorder/probe/probe.cpp, plan_dirty_throttle). One program reading the arguments by a
 * run-time index is refused: clang turns the two layouts' loads into one at a computed context
 * offset. */
static __always_inline void throttle_begin(struct bdi_writeback* wb, long pause, __u64 dirtied) {
  if (pause <= 0) return;
  struct ezio_task* t = pc_task();
  if (!t) return;
  struct pc_throttle* p = &t->throttle;
  p->start = bpf_ktime_get_ns();
  p->call_id = call_id_of(t);
  p->pause = pause;
  p->dirtied = dirtied;
  p->asleep = 0;
  struct backing_dev_info* bdi = BPF_CORE_READ(wb, bdi);
  if (bpf_probe_read_kernel_str(p->bdi, sizeof(p->bdi), &bdi->dev_name) < 0) p->bdi[0] = 0;
}

/* Since 6.10: (wb, dtc, dirty_ratelimit, task_ratelimit, dirtied, period, pause, start_time) */
SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(ezio_pc_throttle_8, struct bdi_writeback* wb, void* dtc, unsigned long dirty_ratelimit,
             unsigned long task_ratelimit, unsigned long dirtied, unsigned long period,
             long pause) {
  throttle_begin(wb, pause, dirtied);
  return 0;
}

/* Before: (wb, thresh, bg_thresh, dirty, bdi_thresh, bdi_dirty, dirty_ratelimit, task_ratelimit,
 * dirtied, period, pause, start_time) */
SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(ezio_pc_throttle_12, struct bdi_writeback* wb, unsigned long thresh,
             unsigned long bg_thresh, unsigned long dirty, unsigned long bdi_thresh,
             unsigned long bdi_dirty, unsigned long dirty_ratelimit, unsigned long task_ratelimit,
             unsigned long dirtied, unsigned long period, long pause) {
  throttle_begin(wb, pause, dirtied);
  return 0;
}

static __always_inline void throttle_send(struct ezio_task* t, struct task_struct* task,
                                          __u64 now) {
  struct pc_throttle* p = &t->throttle;
  struct ezio_throttle_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_PAGECACHE);
  if (r) {
    fill_header(&r->h, EZIO_REC_THROTTLE, EZIO_LAYER_PAGECACHE, sizeof(*r), task->tgid, task->pid);
    r->call_id = p->call_id;
    r->t_enter = p->start;
    r->t_exit = now;
    r->pause = p->pause;
    r->dirtied = p->dirtied;
    __builtin_memcpy(r->bdi, p->bdi, sizeof(r->bdi));
    submit_task(t, r);
  }
  p->start = 0;
}

/* The end of a throttling pause: the thread runs again. A switch-out that is not a preemption
 * after the tracepoint is the sleep (io_schedule_timeout); a preemption before it is not, and the
 * switch-in after it does not end the pause. Every context switch of the machine runs this: the
 * TGID bit turns the others away with one load each (task.bpf.h). */
SEC("tp_btf/sched_switch")
int BPF_PROG(ezio_pc_throttle_wake, bool preempt, struct task_struct* prev,
             struct task_struct* next) {
  if (tgid_may_be_traced(prev)) {
    struct ezio_task* t = bpf_task_storage_get(&tasks, prev, 0, 0);
    if (t && t->throttle.start && !preempt) t->throttle.asleep = 1;
  }
  if (!tgid_may_be_traced(next)) return 0;
  struct ezio_task* t = bpf_task_storage_get(&tasks, next, 0, 0);
  if (!t || !t->throttle.start || !t->throttle.asleep) return 0;
  throttle_send(t, next, bpf_ktime_get_ns());
  return 0;
}

/* Last snapshot of an exiting thread that touched the page cache. A second program on this
 * tracepoint, next to the process layer's; it runs in the exiting thread, whose state is still
 * there. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ezio_pc_exit, struct task_struct* p) {
  struct ezio_task* t = bpf_task_storage_get(&tasks, bpf_get_current_task_btf(), 0, 0);
  if (!t || !t->pc.seen) return 0;
  pc_send(t, bpf_ktime_get_ns());
  t->pc.seen = 0;
  return 0;
}

#endif
