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
 * there is no next call (ezio_vfs_fs_kprobe_thread_exit, which does the same for the VFS layer). */
#ifndef EZIO_FS_KPROBE_BPF_H
#define EZIO_FS_KPROBE_BPF_H

#include "common.bpf.h"
#include "fs.bpf.h"
#include "vfs.bpf.h"

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

/* A thread that ends with entries still pending makes no next call to reveal them: the VFS and FS
 * tables are emptied of its entries here, each counted lost. One program for both layers, loaded
 * when either takes kprobes (recorder/probe.cpp); a layer on fentry leaves nothing pending. A
 * thread that made a traced call has task storage (traced_task), still there at its exit; the
 * traced table is no filter: the last thread's exit may already have removed its process from it.
 * Its name starts with ezio_vfs_: recorder/probe_apply.cpp loads those only when the plan says. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ezio_vfs_fs_kprobe_thread_exit, struct task_struct* p) {
  struct ezio_task* t = bpf_task_storage_get(&tasks, p, 0, 0);
  if (!t) return 0;
  vfs_pending_lost(p->pid, t->session);
  fs_pending_lost(p->pid, t->session);
  return 0;
}

#endif
