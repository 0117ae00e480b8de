// SPDX-License-Identifier: GPL-2.0-only
/* The parameters and return types of the file operations bpf/hooks.h's EZIO_FS_FUNCTIONS hook
 * (the shapes of bpf/variants.bpf.h), shared by the recorder's FS layer (bpf/fs.bpf.h) and the
 * metrics' (bpf/metrics_fs.bpf.h); each defines its own EZIO_<shape>_ENTRY and _SEEN. */
#ifndef EZIO_FS_SHAPES_BPF_H
#define EZIO_FS_SHAPES_BPF_H

/* <fs>_file_read_iter, <fs>_file_write_iter */
#define EZIO_FS_ITER_PARAMS struct kiocb *iocb, struct iov_iter *it
#define EZIO_FS_ITER_RET long
/* ext4_sync_file, xfs_file_fsync, btrfs_sync_file: the file operation fsync */
#define EZIO_FS_FSYNC_PARAMS struct file *f, loff_t start, loff_t end, int datasync
#define EZIO_FS_FSYNC_RET int

#endif
