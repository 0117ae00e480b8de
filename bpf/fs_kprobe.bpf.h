/* File-system layer through kprobe/kretprobe: the second choice after fentry/fexit
 * (recorder/probe.cpp), per file system, for kernels that have kprobes but refuse fentry. Same
 * functions, same records (same enum ezio_fs_op), same real entry and exit times as the fentry
 * programs of fs.bpf.h, whose iter_begin/fsync_begin/fs_end do the work. A file system is hooked
 * by these programs or by its fentry ones, never both: a call seen twice would be recorded twice.
 *
 * A kretprobe only sees the return value: inode, offset and length come from the entry's pending
 * record, keyed by thread and function. The kernel keeps a fixed number of kretprobe instances per
 * probe (maxactive), shared by every process in the function; fsync sleeps in it, so a busy
 * machine can run out and a traced call's return goes unseen. Its entry then stays pending: the
 * thread's next call of the function counts it lost (fs_begin), and so does the thread's exit when
 * there is no next call (ezio_fs_kprobe_thread_exit). */
#ifndef EZIO_FS_KPROBE_BPF_H
#define EZIO_FS_KPROBE_BPF_H

#include "common.bpf.h"
#include "fs.bpf.h"

#define EZIO_FS_ITER_KPROBES(fn, op)                                               \
  SEC("kprobe/" #fn)                                                               \
  int BPF_KPROBE(ezio_fs_##fn##_kprobe, struct kiocb* iocb, struct iov_iter* it) { \
    iter_begin(op, iocb, it);                                                      \
    return 0;                                                                      \
  }                                                                                \
  SEC("kretprobe/" #fn)                                                            \
  int BPF_KRETPROBE(ezio_fs_##fn##_kretprobe, long ret) {                          \
    fs_end(op, ret);                                                               \
    return 0;                                                                      \
  }

#define EZIO_FS_FSYNC_KPROBES(fn, op)                                               \
  SEC("kprobe/" #fn)                                                                \
  int BPF_KPROBE(ezio_fs_##fn##_kprobe, struct file* f, loff_t start, loff_t end) { \
    fsync_begin(op, f, start, end);                                                 \
    return 0;                                                                       \
  }                                                                                 \
  SEC("kretprobe/" #fn)                                                             \
  int BPF_KRETPROBE(ezio_fs_##fn##_kretprobe, int ret) {                            \
    fs_end(op, ret);                                                                \
    return 0;                                                                       \
  }

EZIO_FS_ITER_KPROBES(ext4_file_read_iter, EZIO_FS_EXT4_FILE_READ_ITER)
EZIO_FS_ITER_KPROBES(ext4_file_write_iter, EZIO_FS_EXT4_FILE_WRITE_ITER)
EZIO_FS_FSYNC_KPROBES(ext4_sync_file, EZIO_FS_EXT4_SYNC_FILE)
EZIO_FS_ITER_KPROBES(xfs_file_read_iter, EZIO_FS_XFS_FILE_READ_ITER)
EZIO_FS_ITER_KPROBES(xfs_file_write_iter, EZIO_FS_XFS_FILE_WRITE_ITER)
EZIO_FS_FSYNC_KPROBES(xfs_file_fsync, EZIO_FS_XFS_FILE_FSYNC)
EZIO_FS_ITER_KPROBES(btrfs_file_read_iter, EZIO_FS_BTRFS_FILE_READ_ITER)
EZIO_FS_ITER_KPROBES(btrfs_file_write_iter, EZIO_FS_BTRFS_FILE_WRITE_ITER)
EZIO_FS_FSYNC_KPROBES(btrfs_sync_file, EZIO_FS_BTRFS_SYNC_FILE)

/* A thread that ends with an entry still pending will make no next call to reveal it: each one is
 * an FS event lost to a missed kretprobe. Deleting them also keeps a later thread that reuses the
 * id from counting them again. Loaded only when some file system is hooked with kprobes. A thread
 * that made a traced FS call has task storage (traced_task), still there at its exit; the traced
 * table is no filter: the last thread's exit may already have removed its process from it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ezio_fs_kprobe_thread_exit, struct task_struct* p) {
  if (!bpf_task_storage_get(&tasks, p, 0, 0)) return 0;
  struct fs_pending_key key = {.tid = p->pid};
  for (__u32 op = EZIO_FS_EXT4_FILE_READ_ITER; op <= EZIO_FS_BTRFS_SYNC_FILE; ++op) {
    key.op = op;
    if (!bpf_map_delete_elem(&fs_pending, &key)) count_drop(EZIO_LAYER_FS);
  }
  return 0;
}

#endif
