// SPDX-License-Identifier: GPL-2.0-only
/* The metrics' FS layer (docs/metrics.md): what each file system's own tracepoints see, per job,
 * file-system type and super block. ext4 says each page (or folio) a buffered write copied
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

#endif
