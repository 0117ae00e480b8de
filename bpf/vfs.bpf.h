// SPDX-License-Identifier: GPL-2.0-only
/* VFS layer. Two modes, chosen by the recorder at run time (recorder/probe/probe.cpp):
 * - exact: the functions of bpf/hooks.h's EZIO_VFS_FUNCTIONS (vfs_read, vfs_write, vfs_readv,
 *   vfs_writev, vfs_iter_read/write, vfs_fsync_range, vfs_open) hooked by fentry/fexit, else by
 *   kprobe/kretprobe, both generated from that table (bpf/variants.bpf.h) — real VFS entry and
 *   exit times;
 * - derived: where fentry cannot load (EPERM on the 6.18 development kernels) and kprobes are not
 *   built in, the syscall exit resolves the call's fd to its struct file and sends one VFS record
 *   per call with the syscall's times (EZIO_VFSF_DERIVED).
 * The unchosen programs get autoload=false before load; vfs_derived gates the derived code.
 *
 * With kprobes, the kernel keeps a fixed number of kretprobe instances per probe (maxactive, by
 * default of the order of the CPU count), shared by every process in the function, so a traced
 * call whose return was not caught leaves its entry pending: the thread's next VFS call in a later
 * syscall finds it and counts the lost VFS event (vfs_begin), and so does the thread's exit when
 * there is no next call (ezio_vfs_fs_kprobe_thread_exit in fs.bpf.h). A missed return of a failed
 * vfs_open counts too, although that call would have made no event. A call in the same syscall
 * takes a pending entry for its outer call (stacked file systems, struct vfs_pending): after a
 * missed return, a second VFS call of that syscall is not recorded, and only the first is counted
 * lost; no syscall makes two hooked VFS calls in a row that we know of. */
#ifndef EZIO_VFS_BPF_H
#define EZIO_VFS_BPF_H

#include "common.bpf.h"
#include "file_info.bpf.h"
#include "task.bpf.h"
#include "variants.bpf.h"

const volatile bool vfs_derived = false;
/* enum ezio_vfs_op per syscall number, for the derived mode (recorder/core/vfs_events.cpp). */
const volatile __u8 vfs_op_of_nr[EZIO_MAX_SYSCALL_NR] = {};

/* The file's identity: from the thread's cache when f is a file it used lately and whose path is
 * known to have been sent, else read from the file (and the cache refilled). Returns whether the
 * path still has to be sent (vfs_file_sent). fkey is f's address as a plain number: 6.1's
 * verifier refuses shifting a BTF-typed pointer (fentry/fexit arguments) to pick the slot. */
static __always_inline bool vfs_file_ident(struct ezio_task* t, struct file* f, __u64 fkey,
                                           __u64* ino, __u32* dev, char* fstype) {
  struct file_cache* fc = file_slot(t, fkey);
  __u64 inode = (__u64)BPF_CORE_READ(f, f_inode);
  if (fc->sent && fc->file == (__u64)f && fc->inode == inode) {
    *ino = fc->ino;
    *dev = fc->dev;
    __builtin_memcpy(fstype, fc->fstype, EZIO_FSTYPE_LEN);
    return false;
  }
  struct file_ident id = {};
  file_ident(f, &id, fstype);
  *ino = id.ino;
  *dev = id.dev;
  fc->file = (__u64)f;
  fc->inode = inode;
  fc->ino = id.ino;
  fc->dev = id.dev;
  fc->sent = 0;
  __builtin_memcpy(fc->fstype, fstype, EZIO_FSTYPE_LEN);
  return true;
}

/* After the record is submitted (no ring-buffer reservation held across the call). The file goes
 * to the global function as the plain number fkey: a BTF-typed pointer (fentry/fexit arguments)
 * passed as a global function's scalar argument is refused by 6.1's verifier ("Caller passes
 * invalid args"). */
static __always_inline void vfs_file_sent(struct ezio_task* t, __u64 fkey, bool path_unsent,
                                          __u64 pid_tgid) {
  if (!path_unsent || !fkey || !ezio_send_file(fkey, pid_tgid, t->session, EZIO_LAYER_VFS)) return;
  struct file_cache* fc = file_slot(t, fkey);
  if (fc->file == fkey) fc->sent = 1;
}

static __always_inline bool fill_vfs(struct ezio_vfs_rec* r, struct ezio_task* t, struct file* f,
                                     __u64 fkey, __u8 op, __u64 pid_tgid, __u64 call_id) {
  fill_header(&r->h, EZIO_REC_VFS, EZIO_LAYER_VFS, sizeof(*r), pid_tgid >> 32, (__u32)pid_tgid);
  r->call_id = call_id;
  r->file_key = (__u64)f;
  r->op = op;
  r->flags = 0;
  r->pad = 0;
  return vfs_file_ident(t, f, fkey, &r->ino, &r->dev, r->fstype);
}

/* ---- derived mode: from the syscall exit ---- */

/* The file a syscall worked on, resolved at its exit from its fd (for open, the new fd), or NULL
 * when the derived VFS layer is off or the call has no VFS counterpart. At exit the fd still
 * refers to the file the call used, unless another thread closed it meanwhile. */
static __always_inline struct file* vfs_derived_file(const struct inflight_call* c,
                                                     const volatile struct ezio_sc_desc* d,
                                                     long ret, __u8* op) {
  if (!vfs_derived) return 0;
  *op = vfs_op_of_nr[c->nr & (EZIO_MAX_SYSCALL_NR - 1)];
  if (*op == EZIO_VFS_NONE) return 0;
  __s64 fd = *op == EZIO_VFS_OPEN ? ret : (__s64)arg_or(c, d->fd_arg, (__u64)-1);
  return file_of_fd(bpf_get_current_task_btf(), fd);
}

static __always_inline __s64 vfs_derived_offset(const struct inflight_call* c,
                                                const volatile struct ezio_sc_desc* d, __u8 op,
                                                struct file* f, long ret) {
  if (d->offset_arg != EZIO_NO_ARG) return (__s64)arg_or(c, d->offset_arg, (__u64)-1);
  if ((op == EZIO_VFS_READ || op == EZIO_VFS_WRITE || op == EZIO_VFS_READV ||
       op == EZIO_VFS_WRITEV) &&
      ret >= 0) {
    /* the position after the call minus what it moved: where it started */
    return BPF_CORE_READ(f, f_pos) - ret;
  }
  return -1;
}

/* The VFS part of a syscall record. Returns whether the file's path is still to be sent. f came
 * from the fd table through a probe read: a plain number, usable as its own key. */
static __always_inline bool vfs_fill_part(struct ezio_vfs_part* v, struct ezio_task* t,
                                          struct file* f, __u8 op, const struct inflight_call* c,
                                          const volatile struct ezio_sc_desc* d, long ret) {
  v->file_key = (__u64)f;
  v->op = op;
  v->pad[0] = v->pad[1] = v->pad[2] = 0;
  v->offset = vfs_derived_offset(c, d, op, f, ret);
  return vfs_file_ident(t, f, (__u64)f, &v->ino, &v->dev, v->fstype);
}

/* An open's VFS call, as a record of its own: the open record is already long (its path). f and
 * op: vfs_derived_file()'s. */
static __always_inline void vfs_after_open(struct ezio_task* t,
                                           const volatile struct ezio_sc_desc* d, long ret,
                                           __u64 pid_tgid, struct file* f, __u8 op) {
  const struct inflight_call* c = &t->call;
  if (!f) return;
  struct ezio_vfs_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_VFS);
  if (!r) return;
  bool path_unsent = fill_vfs(r, t, f, (__u64)f, op, pid_tgid, c->call_id);
  r->flags = EZIO_VFSF_DERIVED;
  r->t_enter = c->t_enter;
  r->t_exit = bpf_ktime_get_ns();
  r->ret = ret;
  r->offset = vfs_derived_offset(c, d, op, f, ret);
  submit_task(t, r);
  vfs_file_sent(t, (__u64)f, path_unsent, pid_tgid);
}

/* ---- exact mode: fentry/fexit or kprobe/kretprobe ---- */

/* One entry per thread: the VFS call it is in. A thread is in one VFS call at a time, except that a
 * stacked file system calls the VFS again from inside it, on its backing file: overlayfs's
 * ovl_write_iter calls vfs_iter_write on the upper file, ovl_read_iter vfs_iter_read, ovl_fsync
 * vfs_fsync_range (and vfs_open from 6.6, backing_file_open). The application made one call, on the
 * file it opened: that outer call is its VFS event. The inner calls only count in `nested`, so that
 * their exits are told from the outer one's (a kretprobe sees no file) and leave its entry alone;
 * they are no event and nothing is lost. The file system's own work under them is the FS layer's.
 * An entry is nested when the one in flight belongs to the same syscall (call_id); an entry of an
 * earlier syscall is one whose exit was never seen (a kretprobe missed: this file's head). A
 * missed return of a nested call leaves `nested` one too high: the outer call's exit then takes it
 * for the nested one's, and the outer entry, left pending, is counted lost as above. */
struct vfs_pending {
  __u64 t;
  __s64 offset;
  __u64 file;
  __u64 call_id; /* call_id_of() at the entry: 0 outside a traced syscall */
  __u32 op;
  __u32 nested; /* VFS calls in flight inside this one, on a backing file */
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32); /* thread id */
  __type(value, struct vfs_pending);
} vfs_pending SEC(".maps");

static __always_inline __s64 read_pos(loff_t* pos) {
  loff_t v = -1;
  if (pos) bpf_probe_read_kernel(&v, sizeof(v), pos);
  return v;
}

static __always_inline void vfs_begin(__u8 op, struct file* f, __s64 offset) {
  struct ezio_task* t = traced_task(EZIO_LAYER_VFS);
  if (!t) return;
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u64 call_id = call_id_of(t);
  struct vfs_pending* in_flight = bpf_map_lookup_elem(&vfs_pending, &tid);
  if (in_flight) {
    if (in_flight->call_id == call_id) { /* a stacked file system's call on its backing file */
      in_flight->nested++;
      return;
    }
    /* A call of an earlier syscall whose exit was never seen (a kretprobe missed for want of
     * instances): its VFS event is lost; this call takes the slot. */
    count_drop(t->session, EZIO_LAYER_VFS);
  }
  struct vfs_pending p = {
      .t = bpf_ktime_get_ns(), .offset = offset, .file = (__u64)f, .call_id = call_id, .op = op};
  if (bpf_map_update_elem(&vfs_pending, &tid, &p, BPF_ANY)) count_drop(t->session, EZIO_LAYER_VFS);
}

/* At the exit of thread tid: an entry it left pending is a VFS event lost to a missed kretprobe
 * (above). Deleting it also keeps a later thread that reuses the id from counting it again. */
static __always_inline void vfs_pending_lost(__u32 tid, __u32 session) {
  if (!bpf_map_delete_elem(&vfs_pending, &tid)) count_drop(session, EZIO_LAYER_VFS);
}

/* The exit of every VFS hook. f: the file the fexit program sees, or NULL when it sees none (a
 * kretprobe has only the return value): then the file of the pending entry. The exit of a nested
 * call (one is counted) comes before its outer call's. A failed vfs_open made no event: its entry
 * is dropped. */
static __always_inline void vfs_exit(__u8 op, struct file* f, long ret) {
  struct ezio_task* t = traced_task(EZIO_LAYER_VFS);
  if (!t) return;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  __u32 tid = (__u32)pid_tgid;
  struct vfs_pending* p = bpf_map_lookup_elem(&vfs_pending, &tid);
  if (!p) return;
  if (p->nested) {
    p->nested--;
    return;
  }
  if (p->op != op) return; /* an exit whose entry was not recorded */
  if (!f) f = (struct file*)p->file;
  if (p->file == (__u64)f && !(op == EZIO_VFS_OPEN && ret != 0)) {
    struct ezio_vfs_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_VFS);
    if (r) {
      r->t_enter = p->t;
      r->offset = p->offset;
      __u64 fkey = 0;
      bpf_probe_read_kernel(&fkey, sizeof(fkey), &f);
      bool path_unsent = fill_vfs(r, t, f, fkey, op, pid_tgid, call_id_of(t));
      r->t_exit = bpf_ktime_get_ns();
      r->ret = ret;
      submit_task(t, r);
      vfs_file_sent(t, fkey, path_unsent, pid_tgid);
    }
  }
  bpf_map_delete_elem(&vfs_pending, &tid);
}

/* The shapes of bpf/hooks.h's EZIO_VFS_FUNCTIONS (bpf/variants.bpf.h). */
/* vfs_read, vfs_write */
#define EZIO_VFS_RW_PARAMS struct file* f, const char* buf, size_t count, loff_t* pos
#define EZIO_VFS_RW_RET long
#define EZIO_VFS_RW_ENTRY(op) vfs_begin(op, f, read_pos(pos))
#define EZIO_VFS_RW_SEEN f
/* vfs_readv, vfs_writev */
#define EZIO_VFS_RWV_PARAMS \
  struct file* f, const struct iovec* vec, unsigned long vlen, loff_t* pos, int flags
#define EZIO_VFS_RWV_RET long
#define EZIO_VFS_RWV_ENTRY(op) vfs_begin(op, f, read_pos(pos))
#define EZIO_VFS_RWV_SEEN f
/* vfs_iter_read, vfs_iter_write */
#define EZIO_VFS_ITER_PARAMS struct file* f, struct iov_iter* iter, loff_t* pos, int flags
#define EZIO_VFS_ITER_RET long
#define EZIO_VFS_ITER_ENTRY(op) vfs_begin(op, f, read_pos(pos))
#define EZIO_VFS_ITER_SEEN f
/* vfs_fsync_range */
#define EZIO_VFS_FSYNC_PARAMS struct file* f, loff_t start, loff_t end, int datasync
#define EZIO_VFS_FSYNC_RET int
#define EZIO_VFS_FSYNC_ENTRY(op) vfs_begin(op, f, start)
#define EZIO_VFS_FSYNC_SEEN f
/* vfs_open: fills in the struct file, whose inode is only known at exit, on success */
#define EZIO_VFS_OPEN_PARAMS const struct path* path, struct file* f
#define EZIO_VFS_OPEN_RET int
#define EZIO_VFS_OPEN_ENTRY(op) vfs_begin(op, f, -1)
#define EZIO_VFS_OPEN_SEEN f

/* <stem>_entry/_exit (fentry/fexit) and _kprobe/_kretprobe per VFS function. */
#define EZIO_VFS_PROGS(fs, fn, op, shape) \
  EZIO_EXACT_PROGS(EZIO_VFS_PROG(fn), fn, EZIO_VFS_##op, shape, vfs_exit)
EZIO_VFS_FUNCTIONS(EZIO_VFS_PROGS)

#endif
