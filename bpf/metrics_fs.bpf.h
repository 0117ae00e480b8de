// SPDX-License-Identifier: GPL-2.0-only
/* The metrics' FS layer (docs/metrics.md), per job, file-system type and super block. Where
 * fentry attaches, a file system's own file operations (bpf/hooks.h's EZIO_FS_FUNCTIONS: every
 * read_iter, write_iter and fsync, with its bytes and duration); else what its tracepoints see:
 * ext4 says each page (or folio) a buffered write copied
 * (write_end) and each fsync with its duration (sync_file enter, exit); xfs each buffered or
 * direct read and write call with its size, and each fsync; btrfs each fsync. A kernel without
 * one of them goes without its series (recorder/metrics/metrics_programs.cpp). No file name is
 * read. Included by metrics.bpf.c. */
#ifndef EZIO_METRICS_FS_BPF_H
#define EZIO_METRICS_FS_BPF_H

/* One FS event of the current thread's job on super block sb; ns 0: not timed. */
static __always_inline void count_fs(__u16 op, struct super_block* sb, __u64 bytes, long ret,
                                     __u64 ns) {
  struct job j = current_job();
  struct ezio_metric_key key = {.cgroup = j.cgroup,
                                .dev = BPF_CORE_READ(sb, s_dev),
                                .uid = j.cgroup ? j.uid : 0,
                                .op = op,
                                .fs = BPF_CORE_READ(sb, s_magic)};
  struct ezio_metric_value* v;
  struct sc_start* s = job_state(j, 0);
  __u32 i = op - EZIO_M_FS_READ;
  if (s && i < 3) {
    if (s->fs_dev != key.dev || s->fs_magic != key.fs) {
      s->fs_dev = key.dev;
      s->fs_magic = key.fs;
      __builtin_memset(s->fs_slot, 0, sizeof(s->fs_slot));
    }
    v = cached_series(&key, &s->fs_slot[i]);
  } else {
    v = series_at(&key);
  }
  if (!v) return;
  v->count += 1;
  if (ret < 0) v->errors += 1;
  if (bytes) v->bytes += bytes;
  if (ns) add_latency(v, ns);
}

/* ext4: once per page or folio a buffered write copied into the cache. */
SEC("tp_btf/ext4_da_write_end")
int BPF_PROG(ezio_m_ext4_da_write_end, struct inode* inode, loff_t pos, unsigned int len,
             unsigned int copied) {
  count_fs(EZIO_M_FS_WRITE, BPF_CORE_READ(inode, i_sb), copied, 0, 0);
  return 0;
}

SEC("tp_btf/ext4_write_end")
int BPF_PROG(ezio_m_ext4_write_end, struct inode* inode, loff_t pos, unsigned int len,
             unsigned int copied) {
  count_fs(EZIO_M_FS_WRITE, BPF_CORE_READ(inode, i_sb), copied, 0, 0);
  return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(ezio_m_ext4_sync_enter, struct file* file, int datasync) {
  struct sc_start* s = bpf_task_storage_get(&sc_starts, bpf_get_current_task_btf(), 0,
                                            BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (s) s->fs_sync_t = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(ezio_m_ext4_sync_exit, struct inode* inode, int ret) {
  struct sc_start* s = bpf_task_storage_get(&sc_starts, bpf_get_current_task_btf(), 0, 0);
  if (!s || !s->fs_sync_t) return 0; /* its enter was not seen (attached meanwhile) */
  __u64 ns = bpf_ktime_get_ns() - s->fs_sync_t;
  s->fs_sync_t = 0;
  count_fs(EZIO_M_FS_FSYNC, BPF_CORE_READ(inode, i_sb), 0, ret, ns);
  return 0;
}

/* xfs: once per read or write call that reaches it, with its size. */
static __always_inline void xfs_call(__u16 op, struct kiocb* iocb, struct iov_iter* iter) {
  count_fs(op, BPF_CORE_READ(iocb, ki_filp, f_inode, i_sb), BPF_CORE_READ(iter, count), 0, 0);
}

SEC("tp_btf/xfs_file_buffered_read")
int BPF_PROG(ezio_m_xfs_buffered_read, struct kiocb* iocb, struct iov_iter* iter) {
  xfs_call(EZIO_M_FS_READ, iocb, iter);
  return 0;
}

SEC("tp_btf/xfs_file_buffered_write")
int BPF_PROG(ezio_m_xfs_buffered_write, struct kiocb* iocb, struct iov_iter* iter) {
  xfs_call(EZIO_M_FS_WRITE, iocb, iter);
  return 0;
}

SEC("tp_btf/xfs_file_direct_read")
int BPF_PROG(ezio_m_xfs_direct_read, struct kiocb* iocb, struct iov_iter* iter) {
  xfs_call(EZIO_M_FS_READ, iocb, iter);
  return 0;
}

SEC("tp_btf/xfs_file_direct_write")
int BPF_PROG(ezio_m_xfs_direct_write, struct kiocb* iocb, struct iov_iter* iter) {
  xfs_call(EZIO_M_FS_WRITE, iocb, iter);
  return 0;
}

SEC("tp_btf/xfs_file_fsync")
int BPF_PROG(ezio_m_xfs_fsync, struct xfs_inode* ip) {
  count_fs(EZIO_M_FS_FSYNC, BPF_CORE_READ(ip, i_vnode.i_sb), 0, 0, 0);
  return 0;
}

SEC("tp_btf/btrfs_sync_file")
int BPF_PROG(ezio_m_btrfs_sync, const struct file* file, int datasync) {
  count_fs(EZIO_M_FS_FSYNC, BPF_CORE_READ(file, f_inode, i_sb), 0, 0, 0);
  return 0;
}

/* ---- fentry/fexit on the file operations, where they attach ---- */

#include "fs_shapes.bpf.h"
#include "variants.bpf.h"

/* The metrics' op of a file operation (record.h's EZIO_FS_OPS), by its direction: indexed by a
 * constant, folded at compile time. */
#define EZIO_M_FS_DIR_R EZIO_M_FS_READ
#define EZIO_M_FS_DIR_W EZIO_M_FS_WRITE
#define EZIO_M_FS_DIR_S EZIO_M_FS_FSYNC
#define EZIO_M_FS_OP_OF(op, value, name, dir) [value] = EZIO_M_FS_DIR_##dir,
static const __u16 m_fs_op_of[] = {EZIO_FS_OPS(EZIO_M_FS_OP_OF)};

/* The thread's pending call of op's kind: read_iter and write_iter share one, fsync has its own
 * (it runs inside an O_SYNC write). */
static __always_inline struct fs_call* fs_call_of(__u16 op, __u64 flags) {
  struct sc_start* s = bpf_task_storage_get(&sc_starts, bpf_get_current_task_btf(), 0, flags);
  return s ? &s->fs_call[op == EZIO_M_FS_FSYNC] : 0;
}

static __always_inline void fs_call_begin(__u16 op, struct super_block* sb) {
  struct fs_call* c = fs_call_of(op, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!c) return;
  c->sb = (__u64)sb;
  c->t = bpf_ktime_get_ns();
}

/* Counted at the exit, with its duration: read and write by the bytes they returned. */
static __always_inline void fs_call_end(__u16 op, void* seen, long ret) {
  struct fs_call* c = fs_call_of(op, 0);
  if (!c || !c->t) return; /* its entry was not seen (attached meanwhile) */
  __u64 ns = bpf_ktime_get_ns() - c->t;
  c->t = 0;
  count_fs(op, (struct super_block*)c->sb, op != EZIO_M_FS_FSYNC && ret > 0 ? ret : 0, ret, ns);
}

#define EZIO_FS_ITER_ENTRY(op) fs_call_begin(op, BPF_CORE_READ(iocb, ki_filp, f_inode, i_sb))
#define EZIO_FS_ITER_SEEN 0
#define EZIO_FS_FSYNC_ENTRY(op) fs_call_begin(op, BPF_CORE_READ(f, f_inode, i_sb))
#define EZIO_FS_FSYNC_SEEN 0

/* ezio_m_fs_<function>_entry and _exit: a file system's are loaded when all its functions take
 * fentry, its tracepoints' programs (above) otherwise (recorder/metrics/metrics_programs.cpp). */
#define EZIO_M_FS_PROG(fn) ezio_m_fs_##fn
#define EZIO_M_FS_PROGS(fs, fn, op, shape) \
  EZIO_FENTRY_PROGS(EZIO_M_FS_PROG(fn), fn, m_fs_op_of[EZIO_FS_##op], shape, fs_call_end)
EZIO_FS_FUNCTIONS(EZIO_M_FS_PROGS)

#endif
