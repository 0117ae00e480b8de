// SPDX-License-Identifier: GPL-2.0-only
/* The always-on metrics' tables, shared by their BPF programs (metrics.bpf.c) and eziotraced's
 * collector (recorder/metrics/): one series per cgroup v2 (the job), operation and device, counted
 * in the kernel for every process of the node; nothing goes through a ring buffer. */
#ifndef EZIO_METRICS_H
#define EZIO_METRICS_H

#ifdef __bpf__
/* vmlinux.h provides __u16 … __u64 */
#else
#include <linux/types.h>
#endif

/* What a series counts. 0 is no operation (the syscalls the metrics do not count). */
enum ezio_metric_op {
  EZIO_M_NONE = 0,
  EZIO_M_SC_READ = 1,  /* read, pread64, readv, preadv, preadv2 */
  EZIO_M_SC_WRITE = 2, /* write, pwrite64, writev, pwritev, pwritev2 */
  EZIO_M_SC_FSYNC = 3,
  EZIO_M_SC_FDATASYNC = 4,
  EZIO_M_SC_SYNC_FILE_RANGE = 5,
  EZIO_M_SC_OPEN = 6, /* open, openat, openat2, creat */
  EZIO_M_SC_CLOSE = 7,
  EZIO_M_BLK_READ = 8, /* block requests, by the operation of the request */
  EZIO_M_BLK_WRITE = 9,
  EZIO_M_BLK_FLUSH = 10,
  EZIO_M_BLK_DISCARD = 11,
  EZIO_M_BLK_OTHER = 12,
  EZIO_M_PC_DIRTIED = 13,   /* page-cache pages dirtied (count: pages) */
  EZIO_M_PC_ACCESSED = 14,  /* pages the read path looked up (mm_filemap_get_pages) */
  EZIO_M_PC_MISSED = 15,    /* of those, pages it had to bring in */
  EZIO_M_PC_READAHEAD = 16, /* pages brought in beyond what the read path needed then */
  EZIO_M_PC_EVICTED = 17,   /* pages removed from the cache in the job's context */
  EZIO_M_PC_THROTTLED = 18, /* pauses of balance_dirty_pages (count) and their time (sum_ns) */
  /* VFS layer: the read, write and sync calls on regular files, per file system and mount */
  EZIO_M_VFS_READ = 19,
  EZIO_M_VFS_WRITE = 20,
  EZIO_M_VFS_FSYNC = 21,
  EZIO_M_VFS_FDATASYNC = 22,
  /* FS layer: what each file system's own tracepoints see (metrics_fs.bpf.h) */
  EZIO_M_FS_READ = 23,
  EZIO_M_FS_WRITE = 24,
  EZIO_M_FS_FSYNC = 25,
  /* Overflow only: VFS events counted under EZIO_M_MNT_OTHER, the mount table being full */
  EZIO_M_MOUNT_OVERFLOW = 26,
  EZIO_M_OP_COUNT = 27,
};

/* The mount of VFS events whose mount found no room in the bounded mount table. */
#define EZIO_M_MNT_OTHER 0xffffffffu

/* The cgroups made while the metrics run whose names are kept (metrics_cgroups.bpf.h), and the
 * room for a name (the cgroup's path under the mount; a longer one is cut). */
#define EZIO_M_CGROUP_NAMES 4096
#define EZIO_M_CGROUP_PATH 512

/* What a series holds beside its counts: the main one, or a block operation's queue time (start
 * to issue) kept apart so that every series does not carry a second histogram. */
enum ezio_metric_kind {
  EZIO_M_KIND_MAIN = 0,
  EZIO_M_KIND_QUEUE = 1,
};

/* Latency buckets, log2 of nanoseconds: bucket 0 holds below 2^EZIO_M_HIST_SHIFT ns, bucket i
 * [2^(i-1+SHIFT), 2^(i+SHIFT)), the last everything above. */
#define EZIO_M_HIST 32
#define EZIO_M_HIST_SHIFT 10

/* The hot slots at most (bpf/metrics_cache.bpf.h): per-CPU counters the threads reach without a
 * hash lookup; preallocated on every CPU, hence fewer than the series. */
#define EZIO_M_HOT_SLOTS 1024

struct ezio_metric_key {
  __u64 cgroup; /* cgroup v2 id (the directory's inode number); 0: no one's (block requests) */
  __u32 dev;    /* kernel dev_t of a block series, 0 for the others */
  __u32 uid;    /* the user: of the caller, of the dirtier of written-back pages; 0 when no one's */
  __u16 op;     /* enum ezio_metric_op */
  __u16 kind;   /* enum ezio_metric_kind */
  __u32 mnt; /* VFS: the kernel's mount id (EZIO_M_MNT_OTHER: the mount table was full); 0 else */
  __u32 fs;  /* VFS, FS: the file system's magic (its super block's s_magic); 0 else */
  __u32 pad;
};

struct ezio_metric_value {
  __u64 count;     /* calls, requests, pages */
  __u64 bytes;     /* moved (a call's result, a request's data) */
  __u64 errors;    /* calls that failed, requests completed with an error */
  __u64 writeback; /* block: requests charged through the dirtier of their pages, not submitted by
                      it */
  __u64 sum_ns;    /* the latencies' sum: syscall entry to exit, block issue to completion (queue
                      kind: start to issue), throttling pauses */
  __u64 hist[EZIO_M_HIST];
};

#endif
