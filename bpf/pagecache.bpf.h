/* Page-cache layer: per traced thread, pages looked up, hit, added (misses and readahead), mapped
 * by faults, dirtied and evicted, from the filemap and writeback tracepoints, which run in the
 * context of the thread doing the work. Counters live in the kernel; a snapshot record goes out at
 * most every EZIO_PAGECACHE_PERIOD_NS per thread and when the thread exits, so a 100 MiB buffered
 * write costs a few hundred records, not one per page. */
#ifndef EZIO_PAGECACHE_BPF_H
#define EZIO_PAGECACHE_BPF_H

#include "attribution.bpf.h"
#include "common.bpf.h"

struct pc_state {
  __u32 pid;
  __u32 pad;
  __u64 last_sent;
  __u64 pending_added; /* pages added since the read path last looked up a batch */
  __u64 accessed, hits, added, readahead, faults, mapped_around, dirtied, evicted, created;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, __u32); /* tid */
  __type(value, struct pc_state);
} pc_threads SEC(".maps");

static __always_inline struct pc_state* pc_current(void) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  if (!is_traced(pid_tgid >> 32)) return 0;
  __u32 tid = pid_tgid;
  struct pc_state* s = bpf_map_lookup_elem(&pc_threads, &tid);
  if (s) return s;
  struct pc_state fresh = {};
  fresh.pid = pid_tgid >> 32;
  bpf_map_update_elem(&pc_threads, &tid, &fresh, BPF_NOEXIST);
  s = bpf_map_lookup_elem(&pc_threads, &tid);
  if (!s) count_drop(EZIO_LAYER_PAGECACHE); /* table full */
  return s;
}

static __always_inline void pc_send(struct pc_state* s, __u32 tid, __u64 now) {
  struct ezio_pagecache_rec* r = reserve(sizeof(*r), EZIO_LAYER_PAGECACHE);
  if (!r) return;
  fill_header(&r->h, EZIO_REC_PAGECACHE, EZIO_LAYER_PAGECACHE, sizeof(*r), s->pid, tid);
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
  submit(r);
  s->last_sent = now;
}

static __always_inline void pc_maybe_send(struct pc_state* s) {
  __u64 now = bpf_ktime_get_ns();
  if (now - s->last_sent >= EZIO_PAGECACHE_PERIOD_NS) {
    pc_send(s, (__u32)bpf_get_current_pid_tgid(), now);
  }
}

/* folio_nr_pages() without the inline helpers: order-0 folios have no PG_head; large ones keep
 * their size in _nr_pages on 64-bit (since 6.9, "mm: add folio->_nr_pages") or as the order in
 * the low byte of _flags_1 before that. The flags word is read raw because 6.18 wraps it in
 * memdesc_flags_t ("mm: introduce memdesc_flags_t"). */
static __always_inline __u64 folio_pages(struct folio* folio) {
  unsigned long flags = 0;
  bpf_probe_read_kernel(&flags, sizeof(flags), &folio->flags);
  if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head)))) return 1;
  if (bpf_core_field_exists(folio->_nr_pages)) return BPF_CORE_READ(folio, _nr_pages);
  return 1ul << (BPF_CORE_READ(folio, _flags_1) & 0xff);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ezio_pc_add, struct folio* folio) {
  struct pc_state* s = pc_current();
  if (!s) return 0;
  __u64 n = folio_pages(folio);
  s->added += n;
  s->pending_added += n;
  pc_maybe_send(s);
  return 0;
}

/* The read path found (after any readahead it started) pages index..last_index in the cache:
 * those this thread just added were misses, the rest hits; what it added beyond the batch was
 * read ahead. */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(ezio_pc_get_pages, struct address_space* mapping, unsigned long index,
             unsigned long last_index) {
  struct pc_state* s = pc_current();
  if (!s) return 0;
  __u64 batch = last_index >= index ? last_index - index + 1 : 0;
  __u64 missed = s->pending_added < batch ? s->pending_added : batch;
  s->accessed += batch;
  s->hits += batch - missed;
  s->readahead += s->pending_added - missed;
  s->pending_added = 0;
  pc_maybe_send(s);
  return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(ezio_pc_fault, struct address_space* mapping, unsigned long index) {
  struct pc_state* s = pc_current();
  if (!s) return 0;
  s->faults += 1;
  /* Pages added since the last lookup were brought in by faults (the previous one's readahead,
   * exec): misses of mmap I/O, not readahead of the read path. misses is derived as
   * added - readahead - created, so forgetting them here is what classifies them. */
  s->pending_added = 0;
  pc_maybe_send(s);
  return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(ezio_pc_map_pages, struct address_space* mapping, unsigned long start,
             unsigned long last) {
  struct pc_state* s = pc_current();
  if (!s) return 0;
  if (last >= start) s->mapped_around += last - start + 1;
  pc_maybe_send(s);
  return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(ezio_pc_delete, struct folio* folio) {
  struct pc_state* s = pc_current();
  if (!s) return 0;
  s->evicted += folio_pages(folio);
  pc_maybe_send(s);
  return 0;
}

/* A clean folio became dirty (folio_account_dirtied): count it, and remember the inode's dirtier
 * for the block layer, which sees the writeback later, usually from a flusher kworker. */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(ezio_pc_dirty, struct folio* folio, struct address_space* mapping) {
  struct ezio_cause who;
  if (!mapping || !current_cause(&who)) return 0;
  note_dirtier(BPF_CORE_READ(mapping, host), &who);
  struct pc_state* s = pc_current();
  if (!s) return 0;
  __u64 n = folio_pages(folio);
  s->dirtied += n;
  /* Pages a write just inserted are dirtied right away: they were created, not missed. */
  __u64 created = s->pending_added < n ? s->pending_added : n;
  s->created += created;
  s->pending_added -= created;
  pc_maybe_send(s);
  return 0;
}

/* Last snapshot of an exiting thread. A second program on this tracepoint, next to the process
 * layer's: the counter table is what tells whether the thread was traced. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ezio_pc_exit, struct task_struct* p) {
  __u32 tid = p->pid;
  struct pc_state* s = bpf_map_lookup_elem(&pc_threads, &tid);
  if (!s) return 0;
  pc_send(s, tid, bpf_ktime_get_ns());
  bpf_map_delete_elem(&pc_threads, &tid);
  return 0;
}

#endif
