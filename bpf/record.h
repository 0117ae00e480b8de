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

#define EZIO_RECORD_VERSION 1
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

enum ezio_kind {
  EZIO_REC_SYSCALL = 1, /* struct ezio_syscall_rec */
  EZIO_REC_OPEN = 2,    /* struct ezio_open_rec: a syscall record plus the path */
  EZIO_REC_FORK = 3,    /* struct ezio_proc_rec: new process or new thread */
  EZIO_REC_EXEC = 4,    /* struct ezio_proc_rec with the program path */
  EZIO_REC_EXIT = 5,    /* struct ezio_proc_rec: a thread ended */
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
  __u32 ppid;        /* FORK: parent TGID */
  __u32 parent_tid;  /* FORK: thread that forked */
  __u32 is_thread;   /* FORK: 1 if a thread was created in an existing process */
  __s32 exit_code;   /* EXIT: task->exit_code */
  char comm[EZIO_COMM_LEN];
  char filename[EZIO_PATH_MAX]; /* EXEC: program path as exec'd */
};

#endif /* EZIO_RECORD_H */
