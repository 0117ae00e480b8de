/* VFS layer through kprobe/kretprobe: the second choice after fentry/fexit (recorder/probe.cpp),
 * for kernels that have kprobes but refuse fentry (no BPF trampoline on that kernel, architecture
 * or configuration, or a policy that forbids it). Same functions, same records, same real entry and
 * exit times as the fentry programs of vfs.bpf.h, whose vfs_begin/vfs_end do the work. The recorder
 * loads either these programs or the fentry ones, never both.
 *
 * A kretprobe only sees the return value: the struct file of the call comes from the entry's
 * pending record. The kernel keeps a fixed number of kretprobe instances per probe (maxactive,
 * by default of the order of the CPU count), shared by every process in the function, so a traced
 * call whose return was not caught leaves its entry pending: the next call of the same function by
 * that thread finds it and counts the lost VFS event (vfs_begin), and so does the thread's exit
 * when there is no next call (ezio_vfs_fs_kprobe_thread_exit in fs_kprobe.bpf.h). A missed return
 * of a failed vfs_open counts too, although that call would have made no event. */
#ifndef EZIO_VFS_KPROBE_BPF_H
#define EZIO_VFS_KPROBE_BPF_H

#include "common.bpf.h"
#include "vfs.bpf.h"

SEC("kprobe/vfs_read")
int BPF_KPROBE(ezio_vfs_read_kprobe, struct file* f, char* buf, size_t count, loff_t* pos) {
  vfs_begin(EZIO_VFS_READ, f, read_pos(pos));
  return 0;
}
SEC("kretprobe/vfs_read")
int BPF_KRETPROBE(ezio_vfs_read_kretprobe, long ret) {
  vfs_end(EZIO_VFS_READ, 0, ret);
  return 0;
}
SEC("kprobe/vfs_write")
int BPF_KPROBE(ezio_vfs_write_kprobe, struct file* f, const char* buf, size_t count, loff_t* pos) {
  vfs_begin(EZIO_VFS_WRITE, f, read_pos(pos));
  return 0;
}
SEC("kretprobe/vfs_write")
int BPF_KRETPROBE(ezio_vfs_write_kretprobe, long ret) {
  vfs_end(EZIO_VFS_WRITE, 0, ret);
  return 0;
}
SEC("kprobe/vfs_readv")
int BPF_KPROBE(ezio_vfs_readv_kprobe, struct file* f, const struct iovec* vec, unsigned long vlen,
               loff_t* pos) {
  vfs_begin(EZIO_VFS_READV, f, read_pos(pos));
  return 0;
}
SEC("kretprobe/vfs_readv")
int BPF_KRETPROBE(ezio_vfs_readv_kretprobe, long ret) {
  vfs_end(EZIO_VFS_READV, 0, ret);
  return 0;
}
SEC("kprobe/vfs_writev")
int BPF_KPROBE(ezio_vfs_writev_kprobe, struct file* f, const struct iovec* vec, unsigned long vlen,
               loff_t* pos) {
  vfs_begin(EZIO_VFS_WRITEV, f, read_pos(pos));
  return 0;
}
SEC("kretprobe/vfs_writev")
int BPF_KRETPROBE(ezio_vfs_writev_kretprobe, long ret) {
  vfs_end(EZIO_VFS_WRITEV, 0, ret);
  return 0;
}
SEC("kprobe/vfs_iter_read")
int BPF_KPROBE(ezio_vfs_iter_read_kprobe, struct file* f, struct iov_iter* iter, loff_t* pos) {
  vfs_begin(EZIO_VFS_ITER_READ, f, read_pos(pos));
  return 0;
}
SEC("kretprobe/vfs_iter_read")
int BPF_KRETPROBE(ezio_vfs_iter_read_kretprobe, long ret) {
  vfs_end(EZIO_VFS_ITER_READ, 0, ret);
  return 0;
}
SEC("kprobe/vfs_iter_write")
int BPF_KPROBE(ezio_vfs_iter_write_kprobe, struct file* f, struct iov_iter* iter, loff_t* pos) {
  vfs_begin(EZIO_VFS_ITER_WRITE, f, read_pos(pos));
  return 0;
}
SEC("kretprobe/vfs_iter_write")
int BPF_KRETPROBE(ezio_vfs_iter_write_kretprobe, long ret) {
  vfs_end(EZIO_VFS_ITER_WRITE, 0, ret);
  return 0;
}
SEC("kprobe/vfs_fsync_range")
int BPF_KPROBE(ezio_vfs_fsync_range_kprobe, struct file* f, loff_t start) {
  vfs_begin(EZIO_VFS_FSYNC_RANGE, f, start);
  return 0;
}
SEC("kretprobe/vfs_fsync_range")
int BPF_KRETPROBE(ezio_vfs_fsync_range_kretprobe, int ret) {
  vfs_end(EZIO_VFS_FSYNC_RANGE, 0, ret);
  return 0;
}
/* vfs_open fills in the struct file: its inode is only known at exit, on success. */
SEC("kprobe/vfs_open")
int BPF_KPROBE(ezio_vfs_open_kprobe, const struct path* path, struct file* f) {
  vfs_begin(EZIO_VFS_OPEN, f, -1);
  return 0;
}
SEC("kretprobe/vfs_open")
int BPF_KRETPROBE(ezio_vfs_open_kretprobe, int ret) {
  if (ret == 0) {
    vfs_end(EZIO_VFS_OPEN, 0, ret);
  } else {
    struct vfs_pending_key key = {.tid = (__u32)bpf_get_current_pid_tgid(), .op = EZIO_VFS_OPEN};
    bpf_map_delete_elem(&vfs_pending, &key);
  }
  return 0;
}

#endif
