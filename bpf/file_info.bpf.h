// SPDX-License-Identifier: GPL-2.0-only
/* fd -> struct file -> inode, device, file-system type and path, with CO-RE reads only, so it runs
 * from any hook (tp_btf/sys_exit in the derived VFS mode, fentry/fexit otherwise). */
#ifndef EZIO_FILE_INFO_BPF_H
#define EZIO_FILE_INFO_BPF_H

#include "common.bpf.h"

/* Files whose path was already sent, per process: (tgid, struct file address) -> inode number.
 * LRU: forgetting an entry only costs one more ezio_file_rec. */
struct file_seen_key {
  __u32 tgid;
  __u32 session; /* a TGID reused in a later session has seen nothing */
  __u64 file;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, struct file_seen_key);
  __type(value, __u64);
} files_seen SEC(".maps");

/* task->files->fdt->fd[fd]; 0 when fd is not open (closed meanwhile, or never was). task is the
 * BTF pointer of bpf_get_current_task_btf(): walking it with plain loads costs no helper call per
 * step (the verifier makes them fault-safe). The array slot is a pointer to a pointer, which the
 * verifier only lets a probe read follow. */
static __always_inline struct file* file_of_fd(struct task_struct* task, __s64 fd) {
  if (fd < 0) return 0;
  struct files_struct* files = task->files;
  if (!files) return 0;
  struct fdtable* fdt = files->fdt;
  if (!fdt) return 0;
  if (fd >= fdt->max_fds) return 0;
  struct file** array = fdt->fd;
  struct file* f = 0;
  bpf_probe_read_kernel(&f, sizeof(f), &array[fd]);
  return f;
}

struct file_ident {
  __u64 ino;
  __u32 dev;
};

static __always_inline void file_ident(struct file* f, struct file_ident* id, char* fstype) {
  struct inode* inode = BPF_CORE_READ(f, f_inode);
  id->ino = BPF_CORE_READ(inode, i_ino);
  id->dev = BPF_CORE_READ(inode, i_sb, s_dev);
  if (fstype) {
    const char* name = BPF_CORE_READ(inode, i_sb, s_type, name);
    if (bpf_probe_read_kernel_str(fstype, EZIO_FSTYPE_LEN, name) < 0) fstype[0] = 0;
  }
}

static __always_inline struct mount* real_mount_of(struct vfsmount* m) {
  /* container_of(m, struct mount, mnt), with the offset relocated for the running kernel */
  return (struct mount*)((char*)m - bpf_core_field_offset(struct mount, mnt));
}

/* The record is built in a per-CPU scratch buffer (832 bytes do not fit on the BPF stack) and
 * copied into the ring buffer once complete. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ezio_file_rec);
} file_scratch SEC(".maps");

struct walk_state {
  struct dentry* d;
  struct vfsmount* vm;
  struct mount* m;
  __u32 n;
  bool crossed;
  bool done;
};

/* One step of the walk up the dentries, crossing mount points: a bpf_loop callback (kernel 5.17),
 * because the verifier explores an open-coded bounded loop of this shape path by path and gives
 * up (E2BIG, 1M instructions) before the end. */
static long walk_step(__u32 i, void* ctx) {
  struct walk_state* w = ctx;
  __u32 zero = 0;
  struct ezio_file_rec* r = bpf_map_lookup_elem(&file_scratch, &zero);
  if (!r) return 1;
  /* locals: inside BPF_CORE_READ, w->x would be relocated against struct walk_state, which the
   * kernel's BTF does not have */
  struct dentry* d = w->d;
  struct vfsmount* vm = w->vm;
  struct mount* m = w->m;
  __u32 n = w->n;
  if (d == BPF_CORE_READ(vm, mnt_root)) {
    struct mount* parent = BPF_CORE_READ(m, mnt_parent);
    if (!parent || parent == m) {
      w->done = true;
      return 1;
    }
    if (!w->crossed) r->mount_depth = n;
    w->crossed = true;
    w->d = BPF_CORE_READ(m, mnt_mountpoint);
    w->m = parent;
    w->vm = (struct vfsmount*)((char*)parent + bpf_core_field_offset(struct mount, mnt));
    return 0;
  }
  if (n >= EZIO_PATH_DEPTH) return 1;
  struct dentry* up = BPF_CORE_READ(d, d_parent);
  const unsigned char* name = BPF_CORE_READ(d, d_name.name);
  char* slot = r->names[n & (EZIO_PATH_DEPTH - 1)];
  long len = bpf_probe_read_kernel_str(slot, EZIO_NAME_LEN, name);
  if (len < 0) slot[0] = 0;
  if (len == EZIO_NAME_LEN) r->flags |= EZIO_FILEF_NAME_TRUNCATED;
  w->n = n + 1;
  if (up == d) { /* root of a file system that is not mounted (pipe, socket, anon inode) */
    w->done = true;
    return 1;
  }
  w->d = up;
  return 0;
}

/* Sends an ezio_file_rec unless this process already got one for this struct file and inode:
 * the path walk and its bytes are paid once per open file, not per call. Returns 1 when the
 * process has the file's record (sent now or before), 0 when it could not be sent. A global
 * (noinline) function, so the verifier checks it once and not inside every caller. Arguments are
 * scalars, as global functions require. */
__noinline int ezio_send_file(__u64 file, __u64 pid_tgid, __u32 session, __u32 layer) {
  struct file* f = (struct file*)file;
  struct file_ident id = {};
  char fstype[EZIO_FSTYPE_LEN] = {};
  file_ident(f, &id, fstype);
  struct file_seen_key key = {.tgid = pid_tgid >> 32, .session = session, .file = file};
  __u64* ino = bpf_map_lookup_elem(&files_seen, &key);
  if (ino && *ino == id.ino) return 1;
  __u32 zero = 0;
  struct ezio_file_rec* r = bpf_map_lookup_elem(&file_scratch, &zero);
  if (!r) return 0;
  fill_header(&r->h, EZIO_REC_FILE, layer, sizeof(*r), pid_tgid >> 32, (__u32)pid_tgid);
  r->file_key = file;
  r->ino = id.ino;
  r->dev = id.dev;
  r->flags = 0;
  r->pad = 0;
  r->mount_depth = 0;
  __builtin_memcpy(r->fstype, fstype, EZIO_FSTYPE_LEN);
  struct walk_state w = {};
  w.d = BPF_CORE_READ(f, f_path.dentry);
  w.vm = BPF_CORE_READ(f, f_path.mnt);
  w.m = real_mount_of(w.vm);
  bpf_loop(EZIO_PATH_DEPTH + 4, walk_step, &w, 0);
  if (!w.done) r->flags |= EZIO_FILEF_PATH_TRUNCATED;
  if (!w.crossed) r->mount_depth = w.n;
  r->depth = w.n;
  void* ring = session_ring(session, layer);
  if (!ring) return 0;
  if (bpf_ringbuf_output(ring, r, sizeof(*r), 0)) {
    lose_and_leave(session, layer);
    return 0;
  }
  leave_session(session); /* session_ring's gate */
  bpf_map_update_elem(&files_seen, &key, &id.ino, BPF_ANY);
  return 1;
}

#endif
