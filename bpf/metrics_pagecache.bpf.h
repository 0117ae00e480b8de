// SPDX-License-Identifier: GPL-2.0-only
/* The always-on metrics' page-cache and dirty-throttling programs: a part of metrics.bpf.c,
 * included at its end, after the tables and helpers they use (count_pages, current_job, the
 * threads' sc_starts and their cached series). */
#ifndef EZIO_METRICS_PAGECACHE_BPF_H
#define EZIO_METRICS_PAGECACHE_BPF_H

/* The page cache, in the context of the thread doing the work (pagecache.bpf.h has the same
 * reasoning for the recorder), for files' data only (not a file system's metadata in its block
 * device's cache): the pages a thread adds to one file are told misses or readahead at the read
 * path's next lookup in that file; pages added with no lookup after them (mmap faults, exec) are
 * misses. Every program here fires per folio or per lookup, not per system call. */
static __always_inline void flush_pending(struct job j, struct sc_start* s) {
  if (s->pending_added) count_pages(s, j, s->pending_dev, EZIO_M_PC_MISSED, s->pending_added);
  s->pending_added = 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ezio_m_pc_add, struct folio* folio) {
  struct job j = current_job();
  if (!j.cgroup) return 0;
  struct inode* host = BPF_CORE_READ(folio, mapping, host);
  if (!host) return 0;
  __u32 mode = BPF_CORE_READ(host, i_mode);
  if (!private_pages(host, mode)) return 0;
  struct sc_start* s = job_state(j, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!s) return 0;
  if (s->pending_inode != (__u64)host) {
    flush_pending(j, s);
    s->pending_inode = (__u64)host;
    s->pending_dev = cache_dev(host, mode);
  }
  s->pending_added += folio_pages(folio);
  return 0;
}

/* The read path found pages index..last_index in the cache (after any readahead it started):
 * those this thread added to the file since its previous lookup were misses, up to the batch; the
 * rest it added was read ahead. */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(ezio_m_pc_get_pages, struct address_space* mapping, unsigned long index,
             unsigned long last_index) {
  struct job j = current_job();
  if (!j.cgroup) return 0;
  struct inode* host = BPF_CORE_READ(mapping, host);
  if (!host) return 0;
  __u32 mode = BPF_CORE_READ(host, i_mode);
  if (!private_pages(host, mode)) return 0;
  __u64 pending = 0;
  struct sc_start* s = job_state(j, 0);
  if (s) {
    if (s->pending_inode == (__u64)host) {
      pending = s->pending_added;
      s->pending_added = 0;
    } else {
      flush_pending(j, s);
    }
  }
  __u32 dev = cache_dev(host, mode);
  __u64 batch = last_index >= index ? last_index - index + 1 : 0;
  __u64 missed = pending < batch ? pending : batch;
  count_pages(s, j, dev, EZIO_M_PC_ACCESSED, batch);
  if (missed) count_pages(s, j, dev, EZIO_M_PC_MISSED, missed);
  if (pending > missed) count_pages(s, j, dev, EZIO_M_PC_READAHEAD, pending - missed);
  return 0;
}

/* Pages leaving the cache: in a job's context (truncate, fadvise, its own direct reclaim) the
 * job's, in kswapd's no one's. */
SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(ezio_m_pc_delete, struct folio* folio) {
  struct inode* host = BPF_CORE_READ(folio, mapping, host);
  if (!host) return 0;
  __u32 mode = BPF_CORE_READ(host, i_mode);
  if (!private_pages(host, mode)) return 0;
  struct job j = current_job();
  count_pages(job_state(j, 0), j, cache_dev(host, mode), EZIO_M_PC_EVICTED, folio_pages(folio));
  return 0;
}

/* A writer put to sleep by the dirty-page limits: the pause asked (jiffies), counted with its
 * length. The tracepoint's arguments changed in 6.10 (docs/kernel-layers.md): one program per
 * layout, the collector loads the one the kernel's BTF gives. */
static __always_inline void count_throttle(long pause) {
  if (pause <= 0) return;
  struct job j = current_job();
  if (!j.cgroup) return;
  struct ezio_metric_value* v = series_of(j, 0, EZIO_M_PC_THROTTLED, EZIO_M_KIND_MAIN);
  if (!v) return;
  __u32 hz = CONFIG_HZ ? CONFIG_HZ : 250;
  v->count += 1;
  add_latency(v, (__u64)pause * (1000000000u / hz));
}

SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(ezio_m_throttle_8, struct bdi_writeback* wb, void* dtc, unsigned long dirty_ratelimit,
             unsigned long task_ratelimit, unsigned long dirtied, unsigned long period,
             long pause) {
  count_throttle(pause);
  return 0;
}

SEC("tp_btf/balance_dirty_pages")
int BPF_PROG(ezio_m_throttle_12, struct bdi_writeback* wb, unsigned long thresh,
             unsigned long bg_thresh, unsigned long dirty, unsigned long bdi_thresh,
             unsigned long bdi_dirty, unsigned long dirty_ratelimit, unsigned long task_ratelimit,
             unsigned long dirtied, unsigned long period, long pause) {
  count_throttle(pause);
  return 0;
}

#endif
