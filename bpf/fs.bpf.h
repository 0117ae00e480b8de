/* File-system layer (ext4, xfs, btrfs). Exact mode: fentry/fexit on each file system's
 * read_iter / write_iter / fsync file operations, else kprobe/kretprobe on the same functions
 * (fs_kprobe.bpf.h, same records). Fallback: the file systems' own tracepoints, as
 * tp_btf (typed, no tracefs needed); most are single points (EZIO_FSF_POINT), ext4_sync_file_enter
 * and _exit pair into a duration. Which programs load is decided by recorder/probe.cpp. */
#ifndef EZIO_FS_BPF_H
#define EZIO_FS_BPF_H

#include "attribution.bpf.h"
#include "common.bpf.h"
#include "file_info.bpf.h"
#include "task.bpf.h"

struct fs_pending_key {
  __u32 tid;
  __u32 op;
};

struct fs_pending {
  __u64 t;
  __u64 ino;
  __s64 offset;
  __s64 bytes;
  __u32 dev;
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct fs_pending_key);
  __type(value, struct fs_pending);
} fs_pending SEC(".maps");

static __always_inline void inode_ident(struct inode* inode, __u64* ino, __u32* dev) {
  *ino = BPF_CORE_READ(inode, i_ino);
  *dev = BPF_CORE_READ(inode, i_sb, s_dev);
}

static __always_inline void fs_emit(__u16 op, struct ezio_task* t, __u64 t_enter, __u64 ino,
                                    __u32 dev, __s64 offset, __s64 bytes, __s64 ret, __u16 flags) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  struct ezio_fs_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_FS);
  if (!r) return;
  fill_header(&r->h, EZIO_REC_FS, EZIO_LAYER_FS, sizeof(*r), pid_tgid >> 32, (__u32)pid_tgid);
  r->call_id = call_id_of(t);
  r->t_enter = t_enter;
  r->t_exit = flags & EZIO_FSF_POINT ? t_enter : bpf_ktime_get_ns();
  r->ino = ino;
  r->dev = dev;
  r->offset = offset;
  r->bytes = bytes;
  r->ret = ret;
  r->op = op;
  r->flags = flags;
  r->hits = 1;
  r->pad = 0;
  submit_task(t, r);
}

/* ext4's write_begin tracepoints fire once per page written. */
static __always_inline bool fs_op_per_page(__u16 op) {
  return op == EZIO_FS_TP_EXT4_DA_WRITE_BEGIN || op == EZIO_FS_TP_EXT4_WRITE_BEGIN;
}

/* Sends the thread's run as an FS record of its own, when it cannot travel in its syscall's. */
static __always_inline void fs_flush_run(struct ezio_task* t) {
  struct fs_run* run = &t->fs_run;
  if (!run->part.hits) return;
  struct ezio_fs_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_FS);
  if (r) {
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    fill_header(&r->h, EZIO_REC_FS, EZIO_LAYER_FS, sizeof(*r), pid_tgid >> 32, (__u32)pid_tgid);
    r->call_id = run->call_id;
    r->t_enter = run->part.t_first;
    r->t_exit = run->part.t_last;
    r->ino = run->part.ino;
    r->offset = run->part.offset;
    r->bytes = run->part.bytes;
    r->ret = 0;
    r->dev = run->part.dev;
    r->op = run->part.op;
    r->flags = EZIO_FSF_POINT | EZIO_FSF_RUN;
    r->hits = run->part.hits;
    r->pad = 0;
    submit_task(t, r);
  }
  run->part.hits = 0;
}

/* The inode a tracepoint reported: its address (a run continues on the same one), number and
 * device. */
struct fs_inode {
  __u64 key;
  __u64 ino;
  __u32 dev;
};

/* A per-page hit inside a call: extends the call's run when it continues it, else starts one. */
static __always_inline void fs_add_to_run(struct ezio_task* t, __u16 op,
                                          const struct fs_inode* inode, __s64 offset, __s64 bytes) {
  struct fs_run* run = &t->fs_run;
  __u64 now = bpf_ktime_get_ns();
  if (run->part.hits && run->call_id == t->call.call_id && run->part.op == op &&
      run->inode == inode->key && offset == run->part.offset + run->part.bytes) {
    run->part.bytes += bytes;
    run->part.t_last = now;
    run->part.hits += 1;
    return;
  }
  fs_flush_run(t);
  run->call_id = t->call.call_id;
  run->inode = inode->key;
  run->part.op = op;
  run->part.t_first = now;
  run->part.t_last = now;
  run->part.ino = inode->ino;
  run->part.dev = inode->dev;
  run->part.offset = offset;
  run->part.bytes = bytes;
  run->part.hits = 1;
}

/* A single tracepoint: a point event at this instant. */
static __always_inline void fs_point(__u16 op, const struct fs_inode* inode, __s64 offset,
                                     __s64 bytes) {
  struct ezio_task* t = traced_task(EZIO_LAYER_FS);
  if (!t) return;
  if (fs_op_per_page(op) && t->call.active) {
    fs_add_to_run(t, op, inode, offset, bytes);
    return;
  }
  fs_emit(op, t, bpf_ktime_get_ns(), inode->ino, inode->dev, offset, bytes, 0, EZIO_FSF_POINT);
}

/* An inode met once per call (xfs, iomap, btrfs, fsync): probe reads, which cost the verifier
 * nothing (attribution.bpf.h, tp_inode_ident). */
static __always_inline void fs_point_read(__u16 op, struct inode* inode, __s64 offset,
                                          __s64 bytes) {
  struct fs_inode i = {.key = (__u64)inode};
  inode_ident(inode, &i.ino, &i.dev);
  fs_point(op, &i, offset, bytes);
}

/* ext4's write_begin: once per page written, by direct loads. */
static __always_inline void fs_point_page(__u16 op, struct inode* inode, __s64 offset,
                                          __s64 bytes) {
  struct fs_inode i = {.key = (__u64)inode};
  tp_inode_ident(inode, &i.ino, &i.dev);
  fs_point(op, &i, offset, bytes);
}

static __always_inline void fs_begin(__u16 op, struct inode* inode, __s64 offset, __s64 bytes) {
  struct ezio_task* t = traced_task(EZIO_LAYER_FS);
  if (!t) return;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  struct fs_pending_key key = {.tid = (__u32)pid_tgid, .op = op};
  struct fs_pending p = {.t = bpf_ktime_get_ns(), .offset = offset, .bytes = bytes};
  inode_ident(inode, &p.ino, &p.dev);
  if (!bpf_map_update_elem(&fs_pending, &key, &p, BPF_NOEXIST)) return;
  /* An entry is there already: a call whose exit was never seen (a kretprobe missed for want of
   * instances) or the table is full. Either way one FS event is lost; this call takes the slot. */
  count_drop(t->session, EZIO_LAYER_FS);
  bpf_map_update_elem(&fs_pending, &key, &p, BPF_ANY);
}

static __always_inline void fs_end(__u16 op, long ret) {
  struct ezio_task* t = traced_task(EZIO_LAYER_FS);
  if (!t) return;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  struct fs_pending_key key = {.tid = (__u32)pid_tgid, .op = op};
  struct fs_pending* p = bpf_map_lookup_elem(&fs_pending, &key);
  if (!p) return;
  fs_emit(op, t, p->t, p->ino, p->dev, p->offset, p->bytes, ret, 0);
  bpf_map_delete_elem(&fs_pending, &key);
}

/* At the exit of thread tid: each entry it left pending is an FS event lost to a missed kretprobe
 * (fs_kprobe.bpf.h); the ext4_sync_file tracepoint pair never misses its exit. Deleting them also
 * keeps a later thread that reuses the id from counting them again. */
static __always_inline void fs_pending_lost(__u32 tid, __u32 session) {
  struct fs_pending_key key = {.tid = tid};
  for (__u32 op = EZIO_FS_EXT4_FILE_READ_ITER; op <= EZIO_FS_BTRFS_SYNC_FILE; ++op) {
    key.op = op;
    if (!bpf_map_delete_elem(&fs_pending, &key)) count_drop(session, EZIO_LAYER_FS);
  }
}

static __always_inline struct inode* kiocb_inode(struct kiocb* iocb) {
  return BPF_CORE_READ(iocb, ki_filp, f_inode);
}

static __always_inline void iter_begin(__u16 op, struct kiocb* iocb, struct iov_iter* it) {
  fs_begin(op, kiocb_inode(iocb), BPF_CORE_READ(iocb, ki_pos), BPF_CORE_READ(it, count));
}

#ifndef LLONG_MAX
#define LLONG_MAX 0x7fffffffffffffffLL
#endif

/* fsync(2) asks for the range 0..LLONG_MAX: the whole file, no length. */
static __always_inline void fsync_begin(__u16 op, struct file* f, loff_t start, loff_t end) {
  fs_begin(op, BPF_CORE_READ(f, f_inode), start, end == LLONG_MAX ? -1 : end - start + 1);
}

static __always_inline void iter_point(__u16 op, struct kiocb* iocb, struct iov_iter* it) {
  fs_point_read(op, kiocb_inode(iocb), BPF_CORE_READ(iocb, ki_pos), BPF_CORE_READ(it, count));
}

/* ---- exact mode: fentry/fexit on the file operations ---- */

#define EZIO_FS_ITER_PAIR(fn, op)                                                        \
  SEC("fentry/" #fn)                                                                     \
  int BPF_PROG(ezio_fs_##fn##_entry, struct kiocb* iocb, struct iov_iter* it) {          \
    iter_begin(op, iocb, it);                                                            \
    return 0;                                                                            \
  }                                                                                      \
  SEC("fexit/" #fn)                                                                      \
  int BPF_PROG(ezio_fs_##fn##_exit, struct kiocb* iocb, struct iov_iter* it, long ret) { \
    fs_end(op, ret);                                                                     \
    return 0;                                                                            \
  }

#define EZIO_FS_FSYNC_PAIR(fn, op)                                                          \
  SEC("fentry/" #fn)                                                                        \
  int BPF_PROG(ezio_fs_##fn##_entry, struct file* f, loff_t start, loff_t end) {            \
    fsync_begin(op, f, start, end);                                                         \
    return 0;                                                                               \
  }                                                                                         \
  SEC("fexit/" #fn)                                                                         \
  int BPF_PROG(ezio_fs_##fn##_exit, struct file* f, loff_t start, loff_t end, int datasync, \
               int ret) {                                                                   \
    fs_end(op, ret);                                                                        \
    return 0;                                                                               \
  }

EZIO_FS_ITER_PAIR(ext4_file_read_iter, EZIO_FS_EXT4_FILE_READ_ITER)
EZIO_FS_ITER_PAIR(ext4_file_write_iter, EZIO_FS_EXT4_FILE_WRITE_ITER)
EZIO_FS_FSYNC_PAIR(ext4_sync_file, EZIO_FS_EXT4_SYNC_FILE)
EZIO_FS_ITER_PAIR(xfs_file_read_iter, EZIO_FS_XFS_FILE_READ_ITER)
EZIO_FS_ITER_PAIR(xfs_file_write_iter, EZIO_FS_XFS_FILE_WRITE_ITER)
EZIO_FS_FSYNC_PAIR(xfs_file_fsync, EZIO_FS_XFS_FILE_FSYNC)
EZIO_FS_ITER_PAIR(btrfs_file_read_iter, EZIO_FS_BTRFS_FILE_READ_ITER)
EZIO_FS_ITER_PAIR(btrfs_file_write_iter, EZIO_FS_BTRFS_FILE_WRITE_ITER)
EZIO_FS_FSYNC_PAIR(btrfs_sync_file, EZIO_FS_BTRFS_SYNC_FILE)

/* ---- fallback: the file systems' tracepoints ---- */

SEC("tp_btf/ext4_da_write_begin")
int BPF_PROG(ezio_fs_tp_ext4_da_write_begin, struct inode* inode, loff_t pos, unsigned int len) {
  fs_point_page(EZIO_FS_TP_EXT4_DA_WRITE_BEGIN, inode, pos, len);
  return 0;
}
SEC("tp_btf/ext4_write_begin")
int BPF_PROG(ezio_fs_tp_ext4_write_begin, struct inode* inode, loff_t pos, unsigned int len) {
  fs_point_page(EZIO_FS_TP_EXT4_WRITE_BEGIN, inode, pos, len);
  return 0;
}
SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(ezio_fs_tp_ext4_sync_file_enter, struct file* f, int datasync) {
  fs_begin(EZIO_FS_TP_EXT4_SYNC_FILE, BPF_CORE_READ(f, f_inode), -1, -1);
  return 0;
}
SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(ezio_fs_tp_ext4_sync_file_exit, struct inode* inode, int ret) {
  fs_end(EZIO_FS_TP_EXT4_SYNC_FILE, ret);
  return 0;
}
SEC("tp_btf/xfs_file_buffered_read")
int BPF_PROG(ezio_fs_tp_xfs_file_buffered_read, struct kiocb* iocb, struct iov_iter* it) {
  iter_point(EZIO_FS_TP_XFS_FILE_BUFFERED_READ, iocb, it);
  return 0;
}
SEC("tp_btf/xfs_file_buffered_write")
int BPF_PROG(ezio_fs_tp_xfs_file_buffered_write, struct kiocb* iocb, struct iov_iter* it) {
  iter_point(EZIO_FS_TP_XFS_FILE_BUFFERED_WRITE, iocb, it);
  return 0;
}
SEC("tp_btf/xfs_file_direct_read")
int BPF_PROG(ezio_fs_tp_xfs_file_direct_read, struct kiocb* iocb, struct iov_iter* it) {
  iter_point(EZIO_FS_TP_XFS_FILE_DIRECT_READ, iocb, it);
  return 0;
}
SEC("tp_btf/xfs_file_direct_write")
int BPF_PROG(ezio_fs_tp_xfs_file_direct_write, struct kiocb* iocb, struct iov_iter* it) {
  iter_point(EZIO_FS_TP_XFS_FILE_DIRECT_WRITE, iocb, it);
  return 0;
}
SEC("tp_btf/xfs_file_fsync")
int BPF_PROG(ezio_fs_tp_xfs_file_fsync, struct xfs_inode* ip) {
  fs_point_read(EZIO_FS_TP_XFS_FILE_FSYNC, &ip->i_vnode, -1, -1);
  return 0;
}
/* Whether the iterator is the source of the data (a write) or its destination (a read): the
 * direction the call came with. data_source since 6.1; before, bit 0 of type (WRITE = 1). */
static __always_inline bool iter_is_source(struct iov_iter* it) {
  struct iov_iter___typed {
    unsigned int type;
  } __attribute__((preserve_access_index))* old = (void*)it;
  if (bpf_core_field_exists(it->data_source)) return BPF_CORE_READ(it, data_source);
  return BPF_CORE_READ(old, type) & 1;
}

#define EZIO_EXT4_SUPER_MAGIC 0xEF53

/* Loaded when ext4 takes its tracepoints (recorder/probe.cpp), which see no direct I/O; xfs has
 * direct-I/O tracepoints of its own and a file system hooked by fentry or kprobes its read_iter and
 * write_iter events, so only ext4's files are recorded here: a call is never counted twice. */
SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(ezio_fs_tp_iomap_dio_rw_begin, struct kiocb* iocb, struct iov_iter* it) {
  if (BPF_CORE_READ(iocb, ki_filp, f_inode, i_sb, s_magic) != EZIO_EXT4_SUPER_MAGIC) return 0;
  iter_point(iter_is_source(it) ? EZIO_FS_TP_IOMAP_DIO_WRITE : EZIO_FS_TP_IOMAP_DIO_READ, iocb, it);
  return 0;
}
SEC("tp_btf/btrfs_sync_file")
int BPF_PROG(ezio_fs_tp_btrfs_sync_file, const struct file* f, int datasync) {
  fs_point_read(EZIO_FS_TP_BTRFS_SYNC_FILE, BPF_CORE_READ(f, f_inode), -1, -1);
  return 0;
}

#endif
