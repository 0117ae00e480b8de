// SPDX-License-Identifier: GPL-2.0-only
/* Record layout shared by the BPF programs (bpf/) and the recorder (recorder/).
 * Every ring-buffer record starts with struct ezio_header; `kind` says which struct follows.
 * Fixed layouts only: the recorder checks `version` and the size of each kind. */
#ifndef EZIO_RECORD_H
#define EZIO_RECORD_H

#ifdef __bpf__
/* vmlinux.h provides __u8 … __s64 */
#else
#include <linux/types.h>
#endif

#define EZIO_RECORD_VERSION 2
#define EZIO_PATH_MAX 256
#define EZIO_COMM_LEN 16
#define EZIO_MAX_SYSCALL_NR 512

enum ezio_layer {
  EZIO_LAYER_SYSCALL = 0,
  EZIO_LAYER_VFS = 1,
  EZIO_LAYER_FS = 2,
  EZIO_LAYER_PAGECACHE = 3,
  EZIO_LAYER_BLOCK = 4,
  EZIO_LAYER_PROCESS = 5, /* fork/exec/exit bookkeeping */
  EZIO_LAYER_COUNT = 6,
};

/* Recording sessions the loaded programs serve at once (recorder/load/kernel_programs.h). A
 * session is named by its id: its slot in the low bits (the index of its ring buffer, drop
 * counters and wake-up latch), a generation above, so that what a closed session left behind in
 * the kernel tables (task states, dirtied inodes, requests in flight) never passes for the next
 * session of the same slot. A live session's id is never 0. */
#define EZIO_MAX_SESSIONS 64
#define EZIO_SESSION_SLOT_BITS 6

/* Value of the `traced` table (TGID -> this). */
enum ezio_traced_state { EZIO_PENDING_EXEC = 1, EZIO_ACTIVE = 2 };
struct ezio_traced {
  __u32 state;   /* enum ezio_traced_state */
  __u32 session; /* the session id the process records into */
};

/* Keys of the per-session tables target_devs (dev: dev_t) and reclaimed (tid). */
struct ezio_dev_key {
  __u32 dev;
  __u32 session;
};
struct ezio_tid_key {
  __u32 tid;
  __u32 session;
};

enum ezio_kind {
  EZIO_REC_SYSCALL = 1,   /* struct ezio_syscall_rec */
  EZIO_REC_OPEN = 2,      /* struct ezio_open_rec: a syscall record plus the path */
  EZIO_REC_FORK = 3,      /* struct ezio_proc_rec: new process or new thread */
  EZIO_REC_EXEC = 4,      /* struct ezio_proc_rec with the program path */
  EZIO_REC_EXIT = 5,      /* struct ezio_proc_rec: a thread ended */
  EZIO_REC_BLOCK = 6,     /* struct ezio_block_rec: one completed, attributed block request */
  EZIO_REC_PAGECACHE = 7, /* struct ezio_pagecache_rec: a thread's page-cache counters */
  EZIO_REC_VFS = 8,       /* struct ezio_vfs_rec: one VFS call (vfs_read, vfs_write, ...) */
  EZIO_REC_FS = 9,        /* struct ezio_fs_rec: one file-system event (ext4, xfs, btrfs, iomap) */
  EZIO_REC_FILE = 10, /* struct ezio_file_rec: where a file is, the first time a process uses it */
  EZIO_REC_SYSCALL_VFS = 11, /* struct ezio_syscall_vfs_rec: a syscall, its derived VFS call and
                                the FS tracepoint hits inside */
  EZIO_REC_THROTTLE = 12,    /* struct ezio_throttle_rec: a pause of balance_dirty_pages */
  EZIO_REC_LEAVE =
      13, /* struct ezio_proc_rec: the process left the traced tree at an exec that
             gains privileges (filename: the program); nothing of it is recorded after */
};

/* How the syscall-layer program treats a syscall number. */
enum ezio_syscall_class {
  EZIO_SC_IGNORE = 0,
  EZIO_SC_PLAIN = 1,  /* arguments copied as the descriptor says */
  EZIO_SC_VECTOR = 2, /* count = sum of iov_len of the iovec array in argument 1 */
  EZIO_SC_OPEN = 3,   /* the path is read, an ezio_open_rec is emitted */
};

#define EZIO_NO_ARG 0xff

/* Where a syscall's interesting arguments are (argument index 0-5, or EZIO_NO_ARG).
 * The recorder fills one per syscall number before loading the programs. */
struct ezio_sc_desc {
  __u8 cls;
  __u8 fd_arg;
  __u8 count_arg; /* bytes requested; for EZIO_SC_VECTOR the iovec count */
  __u8 offset_arg;
  __u8 extra_arg; /* whence, flags, fd_out, …; for openat2 the struct open_how pointer */
  __u8 path_arg;
  __u8 flags_arg;
  __u8 mode_arg;
};

/* Records are 8-byte aligned and sized; pid is the TGID, tid the kernel thread id. */
struct ezio_header {
  __u16 version;
  __u8 kind;
  __u8 layer;
  __u32 size; /* bytes of the whole record, header included */
  __u32 pid;
  __u32 tid;
};

struct ezio_syscall_rec {
  struct ezio_header h;
  __u64 call_id; /* unique per recording; deeper layers refer to it */
  __u64 t_enter; /* CLOCK_MONOTONIC ns (bpf_ktime_get_ns) */
  __u64 t_exit;
  __s64 ret;
  __s64 fd;     /* fd argument (dirfd for openat, fd_in for copies); -1 if none */
  __u64 count;  /* bytes requested (sum of iov_len for vectored calls) */
  __s64 offset; /* explicit offset, or -1 */
  __u64 arg;    /* syscall-specific: whence, flags, fd_out, mmap length… */
  __u32 nr;     /* x86-64 syscall number */
  __u32 flags;  /* EZIO_SCF_* */
};

#define EZIO_SCF_PATH_TRUNCATED 1u /* open path longer than EZIO_PATH_MAX */
#define EZIO_SCF_IOV_TRUNCATED 2u  /* more iovecs than summed; count is a lower bound */

struct ezio_open_rec {
  struct ezio_syscall_rec sc;
  __u32 open_flags;
  __u32 mode;
  char path[EZIO_PATH_MAX];
};

struct ezio_proc_rec {
  struct ezio_header h;
  __u64 ts;
  __u32 ppid;       /* FORK: parent TGID */
  __u32 parent_tid; /* FORK: thread that forked */
  __u32 is_thread;  /* FORK: 1 if a thread was created in an existing process */
  __s32 exit_code;  /* EXIT: task->exit_code */
  char comm[EZIO_COMM_LEN];
  char filename[EZIO_PATH_MAX]; /* EXEC: program path as exec'd */
};

/* How a block request was attributed (ezio_block_rec.cause). */
enum ezio_block_cause {
  EZIO_CAUSE_NONE = 0,      /* not attributed: counted per device, never recorded */
  EZIO_CAUSE_SUBMITTER = 1, /* created by a traced thread: direct I/O, read miss, fault, fsync */
  EZIO_CAUSE_DIRTIER = 2,   /* writeback by another context of pages a traced thread dirtied */
  EZIO_CAUSE_FLUSH = 3,     /* cache flush the block layer issued for a traced thread's request */
};

#define EZIO_DISK_NAME_LEN 32

/* One block request, from its creation to its completion, as one session owns it: the bytes of
 * its own bios in it. h.pid/h.tid are the attributed thread, not the context the record was
 * written in (completion runs in interrupt context). */
struct ezio_block_rec {
  struct ezio_header h;
  __u64 call_id;    /* syscall of the attributed thread that caused it; 0 if none was in flight */
  __u64 t_queue;    /* the session's first bio entered the request (created it or merged) */
  __u64 t_insert;   /* inserted into the I/O scheduler, 0 if it went straight to the driver */
  __u64 t_issue;    /* handed to the driver */
  __u64 t_complete; /* completed by the driver */
  __u64 sector;
  __u32 dev;       /* kernel dev_t (MAJOR << 20 | MINOR) of the partition or disk */
  __u32 bytes;     /* of the session's bios */
  __u32 cmd_flags; /* req_opf: operation in the low 8 bits, REQ_* flags above */
  __s32 error;     /* blk_status_t at completion */
  __u32 cause;     /* enum ezio_block_cause */
  /* Bytes of the request that are not this session's: other processes' bios merged with its own,
   * shared metadata. A count only; whose they are is never recorded. */
  __u32 shared_bytes;
  char disk[EZIO_DISK_NAME_LEN];
};

/* A traced thread and the call it was in: who caused a piece of kernel I/O (bpf/attribution.bpf.h).
 */
struct ezio_cause {
  __u32 pid;
  __u32 tid;
  __u64 call_id;
  __u32 session; /* the thread's: the completion, in another context, records into its ring */
  __u32 pad;
};

/* Sessions one request can be charged to; a further one is counted lost. */
#define EZIO_BLOCK_OWNERS 4

/* A session's part of a block request: its bios. */
struct ezio_blk_owner {
  struct ezio_cause who; /* the owner of the first of its bios in the request */
  __u64 t_queue;         /* when the first of its bios entered the request */
  __u32 bytes;           /* its bios' bytes */
  __u32 cause;           /* enum ezio_block_cause of that first bio */
};

/* Value of the kernel table block_reqs (bpf/block.bpf.h), keyed by struct request *, from the
 * request's creation or issue to its completion. The recorder reads it at a session's end: a
 * request of the session's still there has not completed, so it is not recorded yet. */
struct ezio_blk_req {
  __u64 t_insert;
  __u64 t_issue;
  __u64 sector;
  __u32 bytes; /* the whole request's */
  __u32 owners_n;
  struct ezio_blk_owner owners[EZIO_BLOCK_OWNERS];
};

/* Requests the recorder could not attribute, per device (BPF map block_unattributed). */
struct ezio_block_unattributed {
  __u64 requests;
  __u64 bytes;
  /* Requests completed without ever being issued (empty PREFLUSH requests, which the flush
   * machinery ends itself), the target's or not: /sys/block/<dev>/stat counts them as writes. */
  __u64 not_issued;
};

/* Pages of a traced thread's files evicted by someone else (kswapd, another process's reclaim or
 * fadvise), in the kernel table `reclaimed` keyed by the thread's TID and session
 * (struct ezio_tid_key); read at the end. */
struct ezio_reclaimed {
  __u32 pid;
  __u32 pad;
  __u64 pages;
};

/* Cumulative page-cache counters of one traced thread, in pages. Sent at most every
 * EZIO_PAGECACHE_PERIOD_NS per thread while it does page-cache work, and once when it exits. */
struct ezio_pagecache_rec {
  struct ezio_header h;
  __u64 ts;
  __u64 accessed;      /* pages the read path looked up (filemap_get_pages) */
  __u64 hits;          /* of those, pages that were already cached */
  __u64 added;         /* pages this thread inserted into the page cache (all reasons) */
  __u64 readahead;     /* of those, pages beyond what the read path needed then */
  __u64 faults;        /* page faults on file-backed mappings (filemap_fault) */
  __u64 mapped_around; /* cached pages mapped by fault-around (filemap_map_pages) */
  __u64 dirtied;       /* pages this thread made dirty */
  __u64 evicted;       /* pages removed from the cache in this thread's context */
  __u64 created;       /* of the added, pages a write allocated (no read needed: not a miss) */
};

#define EZIO_PAGECACHE_PERIOD_NS 10000000ull

#define EZIO_BDI_NAME_LEN 32

/* A traced thread put to sleep by the dirty-page limits (writeback:balance_dirty_pages with a
 * pause > 0), from the tracepoint to the moment the thread runs again (sched_switch): the time
 * the write really lost, not only the pause the kernel asked for. */
struct ezio_throttle_rec {
  struct ezio_header h;
  __u64 call_id; /* syscall in flight on the thread, 0 if none (a write fault of a mapping) */
  __u64 t_enter; /* the tracepoint */
  __u64 t_exit;  /* the thread switched in again */
  __u64 pause;   /* the pause the kernel chose, in jiffies */
  __u64 dirtied; /* pages the thread dirtied since its previous pause (the tracepoint's dirtied) */
  char bdi[EZIO_BDI_NAME_LEN]; /* the backing device's name (bdi->dev_name, "7:3" for loop3) */
};

/* ---- VFS and FS layers (bpf/vfs.bpf.h, bpf/fs.bpf.h, bpf/file_info.bpf.h) ---- */

/* The VFS entry points eziotrace knows. With fentry/fexit they are the kernel functions themselves;
 * in the derived mode (no fentry, no kprobes) the syscall that calls them stands in for them. */
enum ezio_vfs_op {
  EZIO_VFS_NONE = 0,
  EZIO_VFS_READ = 1,
  EZIO_VFS_WRITE = 2,
  EZIO_VFS_READV = 3,
  EZIO_VFS_WRITEV = 4,
  EZIO_VFS_ITER_READ = 5,
  EZIO_VFS_ITER_WRITE = 6,
  EZIO_VFS_FSYNC_RANGE = 7,
  EZIO_VFS_OPEN = 8,
  EZIO_VFS_OP_COUNT = 9,
};

#define EZIO_FSTYPE_LEN 16

#define EZIO_VFSF_DERIVED 1u /* times are the syscall's: no hook inside the VFS fired */

struct ezio_vfs_rec {
  struct ezio_header h;
  __u64 call_id; /* syscall in flight on this thread, 0 if none */
  __u64 t_enter;
  __u64 t_exit;
  __u64 file_key; /* struct file address: joins this record with its ezio_file_rec */
  __u64 ino;
  __s64 offset; /* file position the call started at, -1 if unknown */
  __s64 ret;    /* bytes moved, or -errno; 0 for a successful open/fsync */
  __u32 dev;    /* i_sb->s_dev, kernel dev_t (MAJOR << 20 | MINOR) */
  __u8 op;      /* enum ezio_vfs_op */
  __u8 flags;   /* EZIO_VFSF_* */
  __u16 pad;
  char fstype[EZIO_FSTYPE_LEN]; /* i_sb->s_type->name */
};

/* The derived VFS layer's part of a syscall (EZIO_REC_SYSCALL_VFS): the file the call worked on.
 * Sent in the syscall's own record, not as a second one: its times, result and call id are the
 * syscall's, and one ring-buffer record per call instead of two is half the recording's cost. */
struct ezio_vfs_part {
  __u64 file_key; /* as in ezio_vfs_rec */
  __u64 ino;
  __s64 offset; /* file position the call started at, -1 if unknown */
  __u32 dev;
  __u8 op; /* enum ezio_vfs_op */
  __u8 pad[3];
  char fstype[EZIO_FSTYPE_LEN];
};

#define EZIO_PATH_DEPTH 16           /* path components sent; deeper paths are marked truncated */
#define EZIO_NAME_LEN 48             /* bytes per component, NUL included */
#define EZIO_FILEF_PATH_TRUNCATED 1u /* more components than EZIO_PATH_DEPTH */
#define EZIO_FILEF_NAME_TRUNCATED 2u /* a component longer than EZIO_NAME_LEN - 1 */

/* Sent the first time a process uses a struct file (per file_key), so the path walk and its bytes
 * are paid once per open file, not per call. Components are leaf first. */
struct ezio_file_rec {
  struct ezio_header h;
  __u64 file_key;
  __u64 ino;
  __u32 dev;
  __u16 depth;       /* components filled in names */
  __u16 mount_depth; /* components below the file's mount point (names[0..mount_depth-1]) */
  __u32 flags;       /* EZIO_FILEF_* */
  __u32 pad;
  char fstype[EZIO_FSTYPE_LEN];
  char names[EZIO_PATH_DEPTH][EZIO_NAME_LEN];
};

/* File-system events: one line per operation, the one list the enum below and the decoder's names
 * and directions (recorder/decode/fs_events.cpp) come from. X(ENUM, value, name, direction): the
 * value is in archives (never renumber); the name is the kernel's, the function for the
 * fentry/kprobe hooks, the tracepoint for the fallbacks; direction R (reads), W (writes) or S
 * (neither: fsync). Adding an operation is one line here, at the next value. */
#define EZIO_FS_OPS(X)                                                                  \
  /* fentry/fexit (or kprobe/kretprobe) on the file operations: durations */            \
  X(EXT4_FILE_READ_ITER, 1, "ext4_file_read_iter", R)                                   \
  X(EXT4_FILE_WRITE_ITER, 2, "ext4_file_write_iter", W)                                 \
  X(EXT4_SYNC_FILE, 3, "ext4_sync_file", S)                                             \
  X(XFS_FILE_READ_ITER, 4, "xfs_file_read_iter", R)                                     \
  X(XFS_FILE_WRITE_ITER, 5, "xfs_file_write_iter", W)                                   \
  X(XFS_FILE_FSYNC, 6, "xfs_file_fsync", S)                                             \
  X(BTRFS_FILE_READ_ITER, 7, "btrfs_file_read_iter", R)                                 \
  X(BTRFS_FILE_WRITE_ITER, 8, "btrfs_file_write_iter", W)                               \
  X(BTRFS_SYNC_FILE, 9, "btrfs_sync_file", S)                                           \
  /* tracepoints (fallback; ext4's write_begin ones no longer hooked: bpf/fs.bpf.h) */  \
  X(TP_EXT4_DA_WRITE_BEGIN, 10, "ext4_da_write_begin", W)                               \
  X(TP_EXT4_WRITE_BEGIN, 11, "ext4_write_begin", W)                                     \
  /* the ext4_sync_file_enter/exit pair: a duration */                                  \
  X(TP_EXT4_SYNC_FILE, 12, "ext4_sync_file", S)                                         \
  X(TP_XFS_FILE_BUFFERED_READ, 13, "xfs_file_buffered_read", R)                         \
  X(TP_XFS_FILE_BUFFERED_WRITE, 14, "xfs_file_buffered_write", W)                       \
  X(TP_XFS_FILE_DIRECT_READ, 15, "xfs_file_direct_read", R)                             \
  X(TP_XFS_FILE_DIRECT_WRITE, 16, "xfs_file_direct_write", W)                           \
  X(TP_XFS_FILE_FSYNC, 17, "xfs_file_fsync", S)                                         \
  /* iomap_dio_rw_begin, by the direction of its iov_iter: the tracepoint gives none */ \
  X(TP_IOMAP_DIO_READ, 18, "iomap_dio_read", R)                                         \
  X(TP_BTRFS_SYNC_FILE, 19, "btrfs_sync_file", S)                                       \
  X(TP_IOMAP_DIO_WRITE, 20, "iomap_dio_write", W)                                       \
  /* ext4's write_end: once per page or folio written */                                \
  X(TP_EXT4_DA_WRITE_END, 21, "ext4_da_write_end", W)                                   \
  X(TP_EXT4_WRITE_END, 22, "ext4_write_end", W)                                         \
  X(TP_EXT4_JOURNALLED_WRITE_END, 23, "ext4_journalled_write_end", W)

#define EZIO_FS_OP_ENUM_(op, value, name, dir) EZIO_FS_##op = value,
enum ezio_fs_op {
  EZIO_FS_NONE = 0,
  EZIO_FS_OPS(EZIO_FS_OP_ENUM_) EZIO_FS_OP_COUNT = 24,
};
#undef EZIO_FS_OP_ENUM_

#define EZIO_FSF_POINT 1u /* a single tracepoint: t_exit == t_enter, no duration */
/* The hits of the tracepoints that move data (ext4's write_end, xfs's and iomap's reads and
 * writes) in one call, on one file, each starting inside the range of those before, merged:
 * t_enter/t_exit are the first and last hit, offset the first, bytes the length of the range they
 * cover (bpf/fs.bpf.h), hits their number. A 1 MiB write is one event, not 256. Set with
 * EZIO_FSF_POINT. */
#define EZIO_FSF_RUN 2u

struct ezio_fs_rec {
  struct ezio_header h;
  __u64 call_id; /* syscall in flight on this thread, 0 if none */
  __u64 t_enter;
  __u64 t_exit;
  __u64 ino;
  __s64 offset; /* -1 if the hook does not give it */
  __s64 bytes;  /* length asked for (read/write_iter entry), bytes moved (a run); -1: not given */
  __s64 ret;    /* return value for fexit and exit tracepoints, 0 otherwise */
  __u32 dev;
  __u16 op;    /* enum ezio_fs_op */
  __u16 flags; /* EZIO_FSF_* */
  __u32 hits;  /* tracepoint hits merged (EZIO_FSF_RUN); 1 otherwise */
  __u32 pad;
};

/* The FS tracepoint hits of a syscall, merged (EZIO_FSF_RUN), in the syscall's own record when it
 * has one (EZIO_REC_SYSCALL_VFS); hits == 0: none. */
struct ezio_fs_part {
  __u64 t_first;
  __u64 t_last;
  __u64 ino;
  __s64 offset;
  __s64 bytes;
  __u32 dev;
  __u32 hits;
  __u16 op;
  __u16 pad[3];
};

struct ezio_syscall_vfs_rec {
  struct ezio_syscall_rec sc;
  struct ezio_vfs_part vfs;
  struct ezio_fs_part fs;
};

#endif /* EZIO_RECORD_H */
