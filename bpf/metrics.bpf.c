// SPDX-License-Identifier: GPL-2.0-only
/* The always-on metrics (docs/metrics.md): for every process of the node, per cgroup v2 (the job),
 * operation and device, counts, bytes, errors and log2 latency histograms kept in one table
 * (metrics.h), read by eziotraced's collector. An object of its own, loaded and attached only
 * when eziotraced is asked for metrics: without them, not one program more runs. Who owns a block
 * request is decided as the recorder decides it (inode.bpf.h): the submitter, or for the
 * writeback of a file's pages the cgroup that dirtied them; shared metadata is no one's. */
#include "vmlinux.h"
/* After the kernel's types, which they use. */
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "inode.bpf.h"
#include "metrics.h"
#include "record.h"
#include "request.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* enum ezio_metric_op of each syscall number, 0 for those not counted: set by the collector from
 * the recorder's syscall table (recorder/core/syscall_table.h) before the load. */
const volatile __u8 syscall_op[EZIO_MAX_SYSCALL_NR] = {};

/* The layers kept (eziotraced --metrics-layers), set before the load; the programs of a layer
 * not kept are not even loaded, these say what the programs shared by several layers count. */
const volatile bool keep_syscall = true;
const volatile bool keep_vfs = true;
const volatile bool keep_pagecache = true;

/* balance_dirty_pages gives its pauses in jiffies. */
extern unsigned int CONFIG_HZ __kconfig __weak;

/* The series. Its size is eziotraced's --metrics-max-series (set before the load); a series that
 * finds no room is counted in overflow, by operation, never dropped silently. Per CPU: a call's
 * counters are added without atomic instructions (the collector sums the CPUs); the block
 * layer's, which a completion in interrupt context may update over a task's, stay atomic. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, 16384);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct ezio_metric_key);
  __type(value, struct ezio_metric_value);
} series SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, EZIO_M_OP_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} overflow SEC(".maps");

/* A new series starts from this (a map value: 300 bytes do not fit the programs' stack twice). */
const struct ezio_metric_value zero_value = {};

/* A file a thread's calls used lately, with its series' labels (two of them: dd alternates its
 * input and its output). */
struct vfs_seen {
  __u64 file;    /* struct file * */
  __u64 inode;   /* struct inode *: a file freed and its memory reused is not taken for it */
  __u32 counted; /* a regular file: its calls are the VFS layer's */
  __u32 mnt;     /* its mount, bounded (EZIO_M_MNT_OTHER) */
  __u32 dev;     /* its super block's */
  __u32 fs;      /* its super block's magic */
  __u32 slot[4]; /* its VFS series' cached slots (metrics_cache.bpf.h), by op */
};

/* A file system's read_iter/write_iter or fsync from its entry to its exit. */
struct fs_call {
  __u64 t;  /* 0: none (its entry was not seen) */
  __u64 sb; /* struct super_block * */
};

/* Per thread: the syscall in flight, and the pages of one file it added to the cache since the
 * read path last looked some up (misses or readahead, told apart at that lookup). */
struct sc_start {
  __u64 t_enter;
  __u32 nr;
  __u32 pending_dev; /* cache_dev() of pending_inode */
  __u64 pending_added;
  __u64 pending_inode; /* struct inode * */
  /* The VFS layer's last two files (metrics_vfs.bpf.h): their labels found once per file. */
  struct vfs_seen seen[2];
  __u32 seen_next; /* the entry the next new file replaces */
  __u64 fs_sync_t; /* ext4_sync_file_enter's time, for its exit */
  /* The file operation in flight (fentry path, metrics_fs.bpf.h), by kind: an O_SYNC write's
   * fsync runs inside its write_iter. */
  struct fs_call fs_call[2];
  /* The series cached for the thread's job (metrics_cache.bpf.h), by operation: */
  __u32 c_uid;
  __u64 c_cgroup;
  __u32 sc_slot[8]; /* syscall series, by op */
  __u32 pc_dev;     /* page-cache series of this device, by op */
  __u32 pc_slot[6];
  __u32 fs_dev; /* FS series of this super block, by op */
  __u32 fs_magic;
  __u32 fs_slot[3];
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct sc_start);
} sc_starts SEC(".maps");

/* The owner of a block request from its start (or first issue) to its completion. */
struct rq_owner {
  __u64 cgroup;  /* 0: no one's */
  __u64 t_start; /* block_io_start; 0 when the request did not pass it */
  __u64 t_issue;
  __u32 uid;
  __u32 bytes;
  __u16 op;
  __u8 writeback;
  __u8 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 32768);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u64); /* struct request * */
  __type(value, struct rq_owner);
} rq_owners SEC(".maps");

/* The cgroup that last dirtied pages of an inode (ino and dev checked: a freed inode's memory
 * reused for another file is not taken for it). */
struct dirtier {
  __u64 cgroup;
  __u64 ino;
  __u32 dev;
  __u32 uid;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64); /* struct inode * */
  __type(value, struct dirtier);
} dirtiers SEC(".maps");

/* Who a count is charged to: the cgroup (0: no one) and its user. */
struct job {
  __u64 cgroup;
  __u32 uid;
  __u32 pad;
};

/* The cgroup that last asked each device for a cache flush: the flush request the block layer
 * sends for it (blk-flush.c's flush_rq) never passes block_io_start and is issued from kblockd. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32); /* dev_t */
  __type(value, struct job);
} flush_askers SEC(".maps");

static __always_inline void count_overflow(__u32 op) {
  __u64* n = bpf_map_lookup_elem(&overflow, &op);
  if (n) __sync_fetch_and_add(n, 1);
}

/* The series of key, made when missing; NULL (counted) when the table is full. */
static __always_inline struct ezio_metric_value* series_at(struct ezio_metric_key* key) {
  struct ezio_metric_value* v = bpf_map_lookup_elem(&series, key);
  if (v) return v;
  /* Another CPU may make it meanwhile: then its series is this one. */
  long err = bpf_map_update_elem(&series, key, &zero_value, BPF_NOEXIST);
  if (err && err != -17 /* EEXIST */) {
    count_overflow(key->op);
    return 0;
  }
  return bpf_map_lookup_elem(&series, key);
}

/* The series of (job, dev, op, kind). */
static __always_inline struct ezio_metric_value* series_of(struct job j, __u32 dev, __u16 op,
                                                           __u16 kind) {
  struct ezio_metric_key key = {
      .cgroup = j.cgroup, .dev = dev, .uid = j.cgroup ? j.uid : 0, .op = op, .kind = kind};
  return series_at(&key);
}

static __always_inline __u32 hist_bucket(__u64 ns) {
  __u64 v = ns >> EZIO_M_HIST_SHIFT;
  __u32 b = 0;
  /* The position of the highest bit set, plus one: 0 for v == 0. */
  if (v >> 32) {
    b += 32;
    v >>= 32;
  }
  if (v >> 16) {
    b += 16;
    v >>= 16;
  }
  if (v >> 8) {
    b += 8;
    v >>= 8;
  }
  if (v >> 4) {
    b += 4;
    v >>= 4;
  }
  if (v >> 2) {
    b += 2;
    v >>= 2;
  }
  if (v >> 1) {
    b += 1;
    v >>= 1;
  }
  b += v;
  return b < EZIO_M_HIST ? b : EZIO_M_HIST - 1;
}

static __always_inline void add_latency(struct ezio_metric_value* v, __u64 ns) {
  v->sum_ns += ns;
  v->hist[hist_bucket(ns) & (EZIO_M_HIST - 1)] += 1;
}

static __always_inline void add_latency_atomic(struct ezio_metric_value* v, __u64 ns) {
  __sync_fetch_and_add(&v->sum_ns, ns);
  __u32 b = hist_bucket(ns);
  __sync_fetch_and_add(&v->hist[b & (EZIO_M_HIST - 1)], 1);
}

/* After the series and the threads' state, which they use. */
#include "metrics_cache.bpf.h"
#include "metrics_vfs.bpf.h"

/* The system calls' programs (after the series, the threads' state and the VFS layer). */
#include "metrics_syscalls.bpf.h"

#define EZIO_PF_KTHREAD 0x00200000

/* The current thread's job; no one (cgroup 0) for a kernel thread (a flusher, kblockd, kswapd). */
static __always_inline struct job current_job(void) {
  struct job j = {};
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->flags & EZIO_PF_KTHREAD) return j;
  j.cgroup = bpf_get_current_cgroup_id();
  j.uid = bpf_get_current_uid_gid();
  return j;
}

/* pages more in the page-cache series (job, dev, op): through the slots of thread state s when
 * it has one for this job (job_state), else in the table. */
static __always_inline void count_pages(struct sc_start* s, struct job j, __u32 dev, __u16 op,
                                        __u64 pages) {
  struct ezio_metric_key key = {
      .cgroup = j.cgroup, .dev = dev, .uid = j.cgroup ? j.uid : 0, .op = op};
  struct ezio_metric_value* v;
  if (s) {
    if (s->pc_dev != dev) {
      s->pc_dev = dev;
      __builtin_memset(s->pc_slot, 0, sizeof(s->pc_slot));
    }
    __u32 i = op - EZIO_M_PC_DIRTIED;
    if (i >= 6) return;
    v = cached_series(&key, &s->pc_slot[i]);
  } else {
    v = series_at(&key);
  }
  if (v) v->count += pages;
}

/* The device a page-cache series is counted on: a file's file system, or the block device itself
 * for the pages of a block device's own cache. */
static __always_inline __u32 cache_dev(struct inode* host, __u32 mode) {
  if ((mode & EZIO_S_IFMT) == EZIO_S_IFBLK) return BPF_CORE_READ(host, i_rdev);
  return BPF_CORE_READ(host, i_sb, s_dev);
}

/* A clean folio became dirty, in the dirtier's context: its pages are counted, and its cgroup is
 * remembered for the writeback, usually submitted later by a flusher. */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(ezio_m_dirty, struct folio* folio, struct address_space* mapping) {
  if (!mapping) return 0;
  struct inode* host = mapping->host; /* before any branch: inode.bpf.h, tp_inode_ident */
  barrier_var(host);
  if (!host) return 0;
  __u64 ino;
  __u32 dev;
  tp_inode_ident(host, &ino, &dev);
  struct job job = current_job();
  if (!job.cgroup) return 0;
  __u64 pages = folio_pages(folio);
  __u32 mode = host->i_mode;
  struct sc_start* s = job_state(job, 0);
  if (keep_pagecache)
    count_pages(s, job, (mode & EZIO_S_IFMT) == EZIO_S_IFBLK ? host->i_rdev : dev,
                EZIO_M_PC_DIRTIED, pages);
  /* Pages a write just inserted are dirtied at once: created, not missed nor read ahead. */
  if (s && s->pending_inode == (__u64)host)
    s->pending_added -= s->pending_added < pages ? s->pending_added : pages;
  if (!private_pages(host, mode)) return 0;
  __u64 key = (__u64)host;
  struct dirtier* known = bpf_map_lookup_elem(&dirtiers, &key);
  if (known && known->ino == ino && known->dev == dev) {
    if (known->cgroup != job.cgroup || known->uid != job.uid) {
      known->cgroup = job.cgroup;
      known->uid = job.uid;
    }
    return 0;
  }
  struct dirtier d = {.cgroup = job.cgroup, .ino = ino, .dev = dev, .uid = job.uid};
  bpf_map_update_elem(&dirtiers, &key, &d, BPF_ANY);
  return 0;
}

static __always_inline struct job dirtier_of(struct inode* inode) {
  struct job j = {};
  __u64 key = (__u64)inode;
  struct dirtier* d = bpf_map_lookup_elem(&dirtiers, &key);
  if (!d || d->ino != BPF_CORE_READ(inode, i_ino) || d->dev != inode_dev(inode)) return j;
  j.cgroup = d->cgroup;
  j.uid = d->uid;
  return j;
}

static __always_inline __u16 block_op(__u32 cmd_flags) {
  switch (cmd_flags & EZIO_REQ_OP_MASK) {
    case REQ_OP_READ:
      return EZIO_M_BLK_READ;
    case REQ_OP_WRITE:
      return EZIO_M_BLK_WRITE;
    case REQ_OP_FLUSH:
      return EZIO_M_BLK_FLUSH;
    case REQ_OP_DISCARD:
      return EZIO_M_BLK_DISCARD;
    default:
      return EZIO_M_BLK_OTHER;
  }
}

/* The owner of a request entering the block layer, in the submitting context: a write of a file's
 * pages is its dirtier's (writeback: set when that is not the submitter), a write of shared
 * metadata no one's, anything else the submitter's. */
static __always_inline struct job request_owner(struct bio* bio, __u32 cmd_flags, __u8* writeback) {
  struct job self = current_job();
  if ((cmd_flags & EZIO_REQ_OP_MASK) != REQ_OP_WRITE) return self;
  struct inode* inode = bio_inode(bio);
  if (!inode) return self; /* direct I/O, an empty flush */
  if (!private_pages(inode, BPF_CORE_READ(inode, i_mode))) {
    struct job none = {};
    return none;
  }
  struct job dirtier = dirtier_of(inode);
  if (!dirtier.cgroup) return self;
  *writeback = dirtier.cgroup != self.cgroup;
  return dirtier;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(ezio_m_io_start, struct request* rq) {
  __u32 cmd_flags = BPF_CORE_READ(rq, cmd_flags);
  struct rq_owner o = {.op = block_op(cmd_flags), .t_start = bpf_ktime_get_ns()};
  struct job j = request_owner(BPF_CORE_READ(rq, bio), cmd_flags, &o.writeback);
  o.cgroup = j.cgroup;
  o.uid = j.uid;
  if (o.cgroup && rq_wants_flush(cmd_flags)) {
    __u32 dev = rq_dev(rq);
    bpf_map_update_elem(&flush_askers, &dev, &j, BPF_ANY);
  }
  __u64 key = (__u64)rq;
  if (bpf_map_update_elem(&rq_owners, &key, &o, BPF_ANY)) count_overflow(o.op);
  return 0;
}

/* Requests that did not pass block_io_start (a flush's, requests started before the attach, a
 * kernel without the tracepoint) get their owner here: a flush the asker's, the others no one's. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(ezio_m_rq_issue, struct request* rq) {
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  __u32 bytes = BPF_CORE_READ(rq, __data_len);
  struct rq_owner* known = bpf_map_lookup_elem(&rq_owners, &key);
  if (known) {
    if (!known->t_issue) { /* a requeued request keeps its first issue */
      known->t_issue = now;
      known->bytes = bytes;
    }
    return 0;
  }
  struct rq_owner o = {
      .op = block_op(BPF_CORE_READ(rq, cmd_flags)), .t_issue = now, .bytes = bytes};
  if (o.op == EZIO_M_BLK_FLUSH) {
    __u32 dev = rq_dev(rq);
    struct job* asker = bpf_map_lookup_elem(&flush_askers, &dev);
    if (asker) {
      o.cgroup = asker->cgroup;
      o.uid = asker->uid;
      bpf_map_delete_elem(&flush_askers, &dev);
    }
  }
  if (bpf_map_update_elem(&rq_owners, &key, &o, BPF_ANY)) count_overflow(o.op);
  return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(ezio_m_rq_merge, struct request* rq) {
  /* Absorbed by a neighbour, freed without completing: the disk statistics count it as a merge. */
  __u64 key = (__u64)rq;
  bpf_map_delete_elem(&rq_owners, &key);
  return 0;
}

/* Every request counts once, at its (first) completion, as the disk statistics count it; one the
 * flush machinery finished without sending it to the driver (an empty PREFLUSH write) has no
 * latency. */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(ezio_m_rq_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  __u64 key = (__u64)rq;
  struct rq_owner* found = bpf_map_lookup_elem(&rq_owners, &key);
  if (!found) return 0;
  struct rq_owner o = *found;
  if (bpf_map_delete_elem(&rq_owners, &key)) return 0; /* counted by another CPU */
  struct job j = {.cgroup = o.cgroup, .uid = o.uid};
  __u32 dev = rq_dev(rq);
  struct ezio_metric_value* v = series_of(j, dev, o.op, EZIO_M_KIND_MAIN);
  if (!v) return 0;
  __sync_fetch_and_add(&v->count, 1);
  if (error) __sync_fetch_and_add(&v->errors, 1);
  if (o.writeback) __sync_fetch_and_add(&v->writeback, 1);
  if (!o.t_issue) return 0;
  __sync_fetch_and_add(&v->bytes, o.bytes);
  add_latency_atomic(v, bpf_ktime_get_ns() - o.t_issue);
  if (!o.t_start) return 0;
  struct ezio_metric_value* q = series_of(j, dev, o.op, EZIO_M_KIND_QUEUE);
  if (!q) return 0;
  __sync_fetch_and_add(&q->count, 1);
  add_latency_atomic(q, o.t_issue - o.t_start);
  return 0;
}

/* After everything they use. */
#include "metrics_cgroups.bpf.h"
#include "metrics_fs.bpf.h"
#include "metrics_pagecache.bpf.h"
