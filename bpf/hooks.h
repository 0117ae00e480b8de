// SPDX-License-Identifier: GPL-2.0-only
/* The kernel hooks of the syscall, VFS and FS layers, one line each: the BPF programs
 * (bpf/syscall.bpf.h, bpf/vfs.bpf.h, bpf/fs.bpf.h) are generated from these lines, and the
 * recorder's probe plan (recorder/probe/probe.cpp) takes from them what it tries and which programs
 * it loads. Shared by both sides like record.h; nothing here names a kernel type, so C++ includes
 * it as is.
 *
 * Columns:
 * - fs: the file system the hook belongs to (a token: the planner groups the lines by it, in
 *   order of first appearance, and names the file system with it);
 * - function / tracepoint: the kernel's name, also the program's name (below);
 * - op: the event recorded (enum ezio_vfs_op without EZIO_VFS_, enum ezio_fs_op without EZIO_FS_:
 *   record.h, EZIO_FS_OPS, which gives its archive value, name and direction);
 * - shape: the hook's arguments and handler, defined once per shape on the BPF side
 *   (EZIO_<shape>_PARAMS, _ARGS, _RET and the handlers ezio_<shape>_entry/_exit or _tp).
 *
 * Exact hooks (EZIO_VFS_FUNCTIONS, EZIO_FS_FUNCTIONS) each make four programs on the one function:
 * <stem>_entry (fentry), <stem>_exit (fexit), <stem>_kprobe, <stem>_kretprobe, the stem made by
 * EZIO_VFS_PROG or EZIO_FS_PROG below; the planner loads the fentry pair or the kprobe pair.
 * Fallback tracepoints (EZIO_FS_TRACEPOINTS) make one tp_btf program each, EZIO_FS_TP_PROG.
 *
 * Adding a file system: its ops in record.h's EZIO_FS_OPS (next values), its three functions in
 * EZIO_FS_FUNCTIONS and its tracepoints in EZIO_FS_TRACEPOINTS, with existing shapes; a new shape
 * is a parameter list and a handler in bpf/fs.bpf.h (docs/kernel-layers.md, "BPF layout"). */
#ifndef EZIO_HOOKS_H
#define EZIO_HOOKS_H

/* The programs' names (stems of the exact hooks' four): identifiers for the BPF side, strings
 * through EZIO_HOOK_STR for the recorder, which selects the programs by them. */
#define EZIO_VFS_PROG(fn) ezio_##fn
#define EZIO_FS_PROG(fn) ezio_fs_##fn
#define EZIO_FS_TP_PROG(tp) ezio_fs_tp_##tp
#define EZIO_HOOK_STR_(x) #x
#define EZIO_HOOK_STR(x) EZIO_HOOK_STR_(x)

/* X(fs, function, op, shape). The planner requires vfs_read and vfs_write (the first two). */
#define EZIO_VFS_FUNCTIONS(X)                            \
  X(vfs, vfs_read, READ, VFS_RW)                         \
  X(vfs, vfs_write, WRITE, VFS_RW)                       \
  X(vfs, vfs_readv, READV, VFS_RWV)                      \
  X(vfs, vfs_writev, WRITEV, VFS_RWV)                    \
  X(vfs, vfs_iter_read, ITER_READ, VFS_ITER)             \
  X(vfs, vfs_iter_write, ITER_WRITE, VFS_ITER)           \
  X(vfs, vfs_fsync_range, FSYNC_RANGE, VFS_FSYNC)        \
  /* vfs_open fills the struct file in: known at exit */ \
  X(vfs, vfs_open, OPEN, VFS_OPEN)

/* X(fs, function, op, shape): a file system takes fentry or kprobes when all its lines attach. */
#define EZIO_FS_FUNCTIONS(X)                                      \
  X(ext4, ext4_file_read_iter, EXT4_FILE_READ_ITER, FS_ITER)      \
  X(ext4, ext4_file_write_iter, EXT4_FILE_WRITE_ITER, FS_ITER)    \
  X(ext4, ext4_sync_file, EXT4_SYNC_FILE, FS_FSYNC)               \
  X(xfs, xfs_file_read_iter, XFS_FILE_READ_ITER, FS_ITER)         \
  X(xfs, xfs_file_write_iter, XFS_FILE_WRITE_ITER, FS_ITER)       \
  X(xfs, xfs_file_fsync, XFS_FILE_FSYNC, FS_FSYNC)                \
  X(btrfs, btrfs_file_read_iter, BTRFS_FILE_READ_ITER, FS_ITER)   \
  X(btrfs, btrfs_file_write_iter, BTRFS_FILE_WRITE_ITER, FS_ITER) \
  X(btrfs, btrfs_sync_file, BTRFS_SYNC_FILE, FS_FSYNC)

/* X(fs, tracepoint, op, shape): the fallback of a file system whose functions did not all attach,
 * each tracepoint that attaches taken. */
#define EZIO_FS_TRACEPOINTS(X)                                                   \
  /* once per page or folio written: merged into runs (bpf/fs.bpf.h) */          \
  X(ext4, ext4_da_write_end, TP_EXT4_DA_WRITE_END, TP_WRITE_END)                 \
  X(ext4, ext4_write_end, TP_EXT4_WRITE_END, TP_WRITE_END)                       \
  X(ext4, ext4_journalled_write_end, TP_EXT4_JOURNALLED_WRITE_END, TP_WRITE_END) \
  /* a pair: one event with its duration */                                      \
  X(ext4, ext4_sync_file_enter, TP_EXT4_SYNC_FILE, TP_SYNC_ENTER)                \
  X(ext4, ext4_sync_file_exit, TP_EXT4_SYNC_FILE, TP_SYNC_EXIT)                  \
  X(xfs, xfs_file_buffered_read, TP_XFS_FILE_BUFFERED_READ, TP_ITER)             \
  X(xfs, xfs_file_buffered_write, TP_XFS_FILE_BUFFERED_WRITE, TP_ITER)           \
  X(xfs, xfs_file_direct_read, TP_XFS_FILE_DIRECT_READ, TP_ITER)                 \
  X(xfs, xfs_file_direct_write, TP_XFS_FILE_DIRECT_WRITE, TP_ITER)               \
  X(xfs, xfs_file_fsync, TP_XFS_FILE_FSYNC, TP_XFS_INODE)                        \
  X(btrfs, btrfs_sync_file, TP_BTRFS_SYNC_FILE, TP_FILE)

/* X(fs, tracepoint, op, shape): direct I/O of ext4 goes through iomap, which ext4's tracepoints do
 * not see. This one completes them: tried when ext4 takes its tracepoints, its program records
 * ext4's files only, as a read (op) or a write by the direction of the call (bpf/fs.bpf.h). */
#define EZIO_FS_IOMAP_TRACEPOINT(X) X(iomap, iomap_dio_rw_begin, TP_IOMAP_DIO_READ, TP_IOMAP_DIO)

/* X(name, function): the syscalls the syscall layer records, by their name in the recorder's table
 * (recorder/core/syscall_table.cpp, which gives each one's arguments; a unit test keeps both lists
 * the same) and the suffix of their x86-64 kernel function __x64_sys_<function> (sendfile's is
 * sendfile64). Where every function takes fentry, the layer hooks these functions only
 * (bpf/syscall_functions.bpf.h: programs EZIO_SC_PROG(name)_entry and _exit, e.g.
 * ezio_sc_read_entry), so that the node's other syscalls pay nothing; else the raw
 * sys_enter/sys_exit tracepoints, which every syscall of the node passes. */
#define EZIO_SC_PROG(name) ezio_sc_##name
/* The entry and exit bodies the syscalls' fentry and fexit programs share by a tail call
 * (bpf/syscall_functions.bpf.h): loaded against EZIO_SC_BODY_FUNCTION, attached nowhere. A syscall
 * whose function has another prototype in the kernel's BTF takes its programs with the whole
 * bodies instead, EZIO_SC_PROG(name)_entry_whole and _exit_whole (recorder/probe/probe.cpp,
 * hook_syscall_functions). */
#define EZIO_SC_ENTRY_BODY ezio_sc_entry_body
#define EZIO_SC_EXIT_BODY ezio_sc_exit_body
#define EZIO_SC_BODY_FUNCTION __x64_sys_read
#define EZIO_SYSCALL_FUNCTIONS(X)     \
  X(read, read)                       \
  X(write, write)                     \
  X(pread64, pread64)                 \
  X(pwrite64, pwrite64)               \
  X(readv, readv)                     \
  X(writev, writev)                   \
  X(preadv, preadv)                   \
  X(pwritev, pwritev)                 \
  X(preadv2, preadv2)                 \
  X(pwritev2, pwritev2)               \
  X(open, open)                       \
  X(openat, openat)                   \
  X(openat2, openat2)                 \
  X(creat, creat)                     \
  X(close, close)                     \
  X(lseek, lseek)                     \
  X(fsync, fsync)                     \
  X(fdatasync, fdatasync)             \
  X(sync_file_range, sync_file_range) \
  X(mmap, mmap)                       \
  X(munmap, munmap)                   \
  X(msync, msync)                     \
  X(truncate, truncate)               \
  X(ftruncate, ftruncate)             \
  X(fallocate, fallocate)             \
  X(sendfile, sendfile64)             \
  X(copy_file_range, copy_file_range) \
  X(splice, splice)                   \
  X(io_uring_enter, io_uring_enter)   \
  X(dup, dup)                         \
  X(dup2, dup2)                       \
  X(dup3, dup3)

#endif /* EZIO_HOOKS_H */
