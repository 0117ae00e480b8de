// SPDX-License-Identifier: GPL-2.0-only
/* File-system layer (ext4, xfs, btrfs), its hooks listed in bpf/hooks.h and generated from there
 * (bpf/variants.bpf.h). Exact mode: fentry/fexit on each file system's read_iter / write_iter /
 * fsync file operations, else kprobe/kretprobe on the same functions (same handlers, same
 * records). Fallback: the file systems' own tracepoints, as tp_btf (typed, no tracefs needed);
 * most are single points (EZIO_FSF_POINT), ext4_sync_file_enter and _exit pair into a duration.
 * Which programs load is decided by recorder/probe/probe.cpp, per file system.
 *
 * A kretprobe only sees the return value: inode, offset and length come from the entry's pending
 * record, keyed by thread and op. The kernel keeps a fixed number of kretprobe instances per probe
 * (maxactive), shared by every process in the function; fsync sleeps in it, so a busy machine can
 * run out and a traced call's return goes unseen. Its entry then stays pending: the thread's next
 * call of the function counts it lost (fs_begin), and so does the thread's exit when there is no
 * next call (ezio_vfs_fs_kprobe_thread_exit, which does the same for the VFS layer). */
#ifndef EZIO_FS_BPF_H
#define EZIO_FS_BPF_H

#include "attribution.bpf.h"
#include "common.bpf.h"
#include "file_info.bpf.h"
#include "fs_shapes.bpf.h"
#include "task.bpf.h"
#include "variants.bpf.h"
#include "vfs.bpf.h"

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

/* The tracepoints that move data, merged into runs inside a call: ext4's write_end fires once per
 * page or folio written, xfs's and iomap's once per call, or again when the file system retries
 * the call (xfs, after freeing space on ENOSPC). Their bytes are settled at the call's exit
 * (fs_run_settle). */
static __always_inline bool fs_op_merged(__u16 op) {
  return op == EZIO_FS_TP_EXT4_DA_WRITE_END || op == EZIO_FS_TP_EXT4_WRITE_END ||
         op == EZIO_FS_TP_EXT4_JOURNALLED_WRITE_END || op == EZIO_FS_TP_XFS_FILE_BUFFERED_READ ||
         op == EZIO_FS_TP_XFS_FILE_BUFFERED_WRITE || op == EZIO_FS_TP_XFS_FILE_DIRECT_READ ||
         op == EZIO_FS_TP_XFS_FILE_DIRECT_WRITE || op == EZIO_FS_TP_IOMAP_DIO_READ ||
         op == EZIO_FS_TP_IOMAP_DIO_WRITE;
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

/* A hit inside a call: extends the call's run when it starts inside or at the end of the range
 * the run covers, else starts one. The run's bytes are that range's length, not the sum of the
 * hits: a range written again counts once. ext4 copies into a folio that is not up to date, when
 * the copy from the user came short, are thrown away (write_end's copied becomes 0 after the
 * tracepoint) and the kernel writes the same bytes again; an xfs write retried after ENOSPC hits
 * the tracepoint again with the same range. */
static __always_inline void fs_add_to_run(struct ezio_task* t, __u16 op,
                                          const struct fs_inode* inode, __s64 offset, __s64 bytes) {
  struct fs_run* run = &t->fs_run;
  __u64 now = bpf_ktime_get_ns();
  __s64 end = run->part.offset + run->part.bytes;
  if (run->part.hits && run->call_id == t->call.call_id && run->part.op == op &&
      run->inode == inode->key && offset >= run->part.offset && offset <= end) {
    if (offset + bytes > end) run->part.bytes = offset + bytes - run->part.offset;
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
  if (fs_op_merged(op) && t->call.active) {
    fs_add_to_run(t, op, inode, offset, bytes);
    return;
  }
  fs_emit(op, t, bpf_ktime_get_ns(), inode->ino, inode->dev, offset, bytes, 0, EZIO_FSF_POINT);
}

/* An inode met once per call (xfs, iomap, btrfs, fsync): probe reads, which cost the verifier
 * nothing (inode.bpf.h, tp_inode_ident). */
static __always_inline void fs_point_read(__u16 op, struct inode* inode, __s64 offset,
                                          __s64 bytes) {
  struct fs_inode i = {.key = (__u64)inode};
  inode_ident(inode, &i.ino, &i.dev);
  fs_point(op, &i, offset, bytes);
}

/* ext4's write_end: once per page or folio written, by direct loads. */
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
 * (below); the ext4_sync_file tracepoint pair never misses its exit. Deleting them also keeps a
 * later thread that reuses the id from counting them again. One deletion per exact hook's op. */
static __always_inline void fs_pending_lost_op(__u32 tid, __u32 session, __u16 op) {
  struct fs_pending_key key = {.tid = tid, .op = op};
  if (!bpf_map_delete_elem(&fs_pending, &key)) count_drop(session, EZIO_LAYER_FS);
}
#define EZIO_FS_PENDING_LOST(fs, fn, op, shape) fs_pending_lost_op(tid, session, EZIO_FS_##op);
static __always_inline void fs_pending_lost(__u32 tid, __u32 session) {
  EZIO_FS_FUNCTIONS(EZIO_FS_PENDING_LOST)
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

/* ---- exact mode: fentry/fexit, else kprobe/kretprobe, on the file operations ---- */

/* The exit of every FS function: what it needs besides the return value is pending. */
static __always_inline void fs_exit(__u16 op, void* seen, long ret) { fs_end(op, ret); }

/* The handlers of bpf/hooks.h's EZIO_FS_FUNCTIONS' shapes (parameters: fs_shapes.bpf.h). */
#define EZIO_FS_ITER_ENTRY(op) iter_begin(op, iocb, it)
#define EZIO_FS_ITER_SEEN 0
#define EZIO_FS_FSYNC_ENTRY(op) fsync_begin(op, f, start, end)
#define EZIO_FS_FSYNC_SEEN 0

/* <stem>_entry/_exit (fentry/fexit) and _kprobe/_kretprobe per FS function. */
#define EZIO_FS_PROGS(fs, fn, op, shape) \
  EZIO_EXACT_PROGS(EZIO_FS_PROG(fn), fn, EZIO_FS_##op, shape, fs_exit)
EZIO_FS_FUNCTIONS(EZIO_FS_PROGS)

/* ---- fallback: the file systems' tracepoints ---- */

/* Per syscall number: whether the call's return bounds the bytes the file system moved on each
 * of its files (recorder/load/probe_apply.cpp): read, write and their vector forms, whose return
 * is what read_iter or write_iter returned, and sendfile, splice and copy_file_range, which move
 * as many bytes out of one file as into the other. */
const volatile bool fs_capped_nr[EZIO_MAX_SYSCALL_NR] = {};

/* The bytes of the call's run, capped at the call's return where fs_capped_nr says it bounds
 * them. A hit's length can be more: xfs's and iomap's tracepoints give the length asked for (a
 * read crossing the end of the file, a write cut short when the disk fills up), and ext4 may
 * write again bytes it copied before (fs_add_to_run), a copy thrown away when the call then ends.
 * A failed call moved nothing. Only the call's last run is capped: a sendfile between two files
 * of one file system hooked by tracepoints (xfs) alternates its runs, and those sent before keep
 * their hits' lengths. io_uring_enter returns a count of requests: its runs are not capped. */
static __always_inline void fs_run_settle(struct ezio_task* t, long ret) {
  struct fs_run* run = &t->fs_run;
  if (!run->part.hits || run->call_id != t->call.call_id) return;
  if (!fs_capped_nr[t->call.nr & (EZIO_MAX_SYSCALL_NR - 1)]) return;
  if (ret < 0) ret = 0;
  if (run->part.bytes > ret) run->part.bytes = ret;
}

/* The shapes of bpf/hooks.h's EZIO_FS_TRACEPOINTS. */
/* ext4_da_write_end, ext4_write_end, ext4_journalled_write_end: once per page or folio. Their
 * bytes are `copied`, what this step copied into the page cache. Not write_begin's length: where
 * ext4 caches large folios, that is what remains of the write up to the largest folio size, and
 * the folio the step then gets may be smaller, or not the size asked for: only write_end knows
 * what was copied. */
#define EZIO_TP_WRITE_END_PARAMS \
  struct inode *inode, loff_t pos, unsigned int len, unsigned int copied
#define EZIO_TP_WRITE_END_ENTRY(op) fs_point_page(op, inode, pos, copied)
/* ext4_sync_file_enter and _exit: a pair */
#define EZIO_TP_SYNC_ENTER_PARAMS struct file *f, int datasync
#define EZIO_TP_SYNC_ENTER_ENTRY(op) fs_begin(op, BPF_CORE_READ(f, f_inode), -1, -1)
#define EZIO_TP_SYNC_EXIT_PARAMS struct inode *inode, int ret
#define EZIO_TP_SYNC_EXIT_ENTRY(op) fs_end(op, ret)
/* xfs_file_buffered_read/write, xfs_file_direct_read/write: once per call */
#define EZIO_TP_ITER_PARAMS struct kiocb *iocb, struct iov_iter *it
#define EZIO_TP_ITER_ENTRY(op) iter_point(op, iocb, it)
/* xfs_file_fsync */
#define EZIO_TP_XFS_INODE_PARAMS struct xfs_inode* ip
#define EZIO_TP_XFS_INODE_ENTRY(op) fs_point_read(op, &ip->i_vnode, -1, -1)
/* btrfs_sync_file */
#define EZIO_TP_FILE_PARAMS const struct file *f, int datasync
#define EZIO_TP_FILE_ENTRY(op) fs_point_read(op, BPF_CORE_READ(f, f_inode), -1, -1)

/* One tp_btf program per FS tracepoint. */
#define EZIO_FS_TP_PROGS(fs, tp, op, shape) \
  EZIO_TP_PROG(EZIO_FS_TP_PROG(tp), tp, EZIO_FS_##op, shape)
EZIO_FS_TRACEPOINTS(EZIO_FS_TP_PROGS)

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

/* Loaded when ext4 takes its tracepoints (recorder/probe/probe.cpp), which see no direct I/O; xfs
 * has direct-I/O tracepoints of its own and a file system hooked by fentry or kprobes its read_iter
 * and write_iter events, so only ext4's files are recorded here: a call is never counted twice.
 * op is the read; a write is told by the iterator's direction, which the tracepoint does not give.
 */
static __always_inline void iomap_dio_point(__u16 op, struct kiocb* iocb, struct iov_iter* it) {
  if (BPF_CORE_READ(iocb, ki_filp, f_inode, i_sb, s_magic) != EZIO_EXT4_SUPER_MAGIC) return;
  iter_point(iter_is_source(it) ? EZIO_FS_TP_IOMAP_DIO_WRITE : op, iocb, it);
}
#define EZIO_TP_IOMAP_DIO_PARAMS struct kiocb *iocb, struct iov_iter *it
#define EZIO_TP_IOMAP_DIO_ENTRY(op) iomap_dio_point(op, iocb, it)
EZIO_FS_IOMAP_TRACEPOINT(EZIO_FS_TP_PROGS)

/* A thread that ends with entries still pending makes no next call to reveal them: the VFS and FS
 * tables are emptied of its entries here, each counted lost. One program for both layers, loaded
 * when either takes kprobes (recorder/probe/probe.cpp); a layer on fentry leaves nothing pending. A
 * thread that made a traced call has task storage (traced_task), still there at its exit; the
 * traced table is no filter: the last thread's exit may already have removed its process from it.
 * Its name starts with ezio_vfs_: recorder/load/probe_apply.cpp loads those only when the plan
 * says. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ezio_vfs_fs_kprobe_thread_exit, struct task_struct* p) {
  struct ezio_task* t = bpf_task_storage_get(&tasks, p, 0, 0);
  if (!t) return 0;
  vfs_pending_lost(p->pid, t->session);
  fs_pending_lost(p->pid, t->session);
  return 0;
}

#endif
