// SPDX-License-Identifier: GPL-2.0-only
/* The metrics' VFS layer (docs/metrics.md): the read, write and sync calls made on regular files,
 * per job, file-system type and mount. On a kernel without fentry nor kprobes the VFS layer is the
 * system call with its fd resolved to its file, at the call's exit; the file's labels (mount, super
 * block, file-system magic) are found once per file and kept in the thread's state (its last two
 * files). The mounts are
 * bounded (--metrics-max-mounts): a mount that finds no room is counted under EZIO_M_MNT_OTHER and
 * in the overflow, never dropped. No file name is read. Included by metrics.bpf.c. */
#ifndef EZIO_METRICS_VFS_BPF_H
#define EZIO_METRICS_VFS_BPF_H

/* The mounts met, by the kernel's mount id; sized by the collector before the load. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32);
  __type(value, __u32);
} mounts SEC(".maps");

static __always_inline __u16 vfs_op(__u16 op) {
  switch (op) {
    case EZIO_M_SC_READ:
      return EZIO_M_VFS_READ;
    case EZIO_M_SC_WRITE:
      return EZIO_M_VFS_WRITE;
    case EZIO_M_SC_FSYNC:
      return EZIO_M_VFS_FSYNC;
    case EZIO_M_SC_FDATASYNC:
      return EZIO_M_VFS_FDATASYNC;
    default:
      return 0;
  }
}

/* task->files->fdt->fd[fd], 0 when fd is not open (the calls' fds are the first argument). */
static __always_inline struct file* vfs_file_of_fd(__s64 fd) {
  if (fd < 0) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  struct files_struct* files = task->files;
  if (!files) return 0;
  struct fdtable* fdt = files->fdt;
  if (!fdt || fd >= fdt->max_fds) return 0;
  struct file** array = fdt->fd;
  struct file* f = 0;
  bpf_probe_read_kernel(&f, sizeof(f), &array[fd]);
  return f;
}

/* The mount id when the table has (or makes) room for it, else EZIO_M_MNT_OTHER. */
static __always_inline __u32 bounded_mount(__u32 id) {
  if (bpf_map_lookup_elem(&mounts, &id)) return id;
  __u32 one = 1;
  long err = bpf_map_update_elem(&mounts, &id, &one, BPF_NOEXIST);
  return !err || err == -17 /* EEXIST */ ? id : EZIO_M_MNT_OTHER;
}

/* The thread's entry of file f (its labels found when f is not one of its last two files). */
static __always_inline struct vfs_seen* vfs_learn_file(struct sc_start* s, struct file* f) {
  struct inode* inode = BPF_CORE_READ(f, f_inode);
  if (s->seen[0].file == (__u64)f && s->seen[0].inode == (__u64)inode) return &s->seen[0];
  if (s->seen[1].file == (__u64)f && s->seen[1].inode == (__u64)inode) return &s->seen[1];
  struct vfs_seen* e = &s->seen[s->seen_next & 1];
  s->seen_next ^= 1;
  e->file = (__u64)f;
  e->inode = (__u64)inode;
  __builtin_memset(e->slot, 0, sizeof(e->slot));
  __u32 mode = BPF_CORE_READ(inode, i_mode);
  e->counted = (mode & EZIO_S_IFMT) == EZIO_S_IFREG;
  if (!e->counted) return e;
  struct super_block* sb = BPF_CORE_READ(inode, i_sb);
  e->dev = BPF_CORE_READ(sb, s_dev);
  e->fs = BPF_CORE_READ(sb, s_magic);
  struct vfsmount* vm = BPF_CORE_READ(f, f_path.mnt);
  struct mount* m = (struct mount*)((char*)vm - bpf_core_field_offset(struct mount, mnt));
  e->mnt = bounded_mount(BPF_CORE_READ(m, mnt_id));
  return e;
}

/* At a counted call's exit: its VFS series, when its fd is a regular file's. */
static __always_inline void count_vfs(struct sc_start* s, struct job* j, __u16 sc_op, __s64 fd,
                                      long ret, bool timed, __u64 ns) {
  __u16 op = vfs_op(sc_op);
  if (!op) return;
  struct file* f = vfs_file_of_fd(fd);
  if (!f) return; /* closed meanwhile by another thread, or a bad fd */
  struct vfs_seen* e = vfs_learn_file(s, f);
  if (!e->counted) return;
  if (e->mnt == EZIO_M_MNT_OTHER) count_overflow(EZIO_M_MOUNT_OVERFLOW);
  struct ezio_metric_key key = {
      .cgroup = j->cgroup, .dev = e->dev, .uid = j->uid, .op = op, .mnt = e->mnt, .fs = e->fs};
  struct ezio_metric_value* v = cached_series(&key, &e->slot[(op - EZIO_M_VFS_READ) & 3]);
  if (!v) return;
  v->count += 1;
  if (ret < 0)
    v->errors += 1;
  else if (op == EZIO_M_VFS_READ || op == EZIO_M_VFS_WRITE)
    v->bytes += ret;
  if (timed) add_latency(v, ns);
}

#endif
