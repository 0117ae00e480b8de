// SPDX-License-Identifier: GPL-2.0-only
/* Attribution: which traced thread (and which of its calls) caused a piece of kernel I/O.
 * - The current thread, when it belongs to the target tree (synchronous I/O).
 * - For writeback submitted by someone else (flusher kworkers, syncfs helpers): the last traced
 *   thread that dirtied pages of the inode, remembered here when the page became dirty. */
#ifndef EZIO_ATTRIBUTION_BPF_H
#define EZIO_ATTRIBUTION_BPF_H

#include "common.bpf.h"
#include "task.bpf.h"

/* The inode pointer is the key; ino and dev are checked at lookup so that an inode freed and its
 * memory reused for another file is not taken for the one that was dirtied. */
struct ezio_dirtier {
  struct ezio_cause who;
  __u64 ino;
  __u32 dev;
  __u32 pad;
};

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, __u64); /* struct inode * */
  __type(value, struct ezio_dirtier);
} dirtiers SEC(".maps");

/* Block devices each session's target used (its requests, or file systems it dirtied pages on):
 * the recorder reports unattributed requests for these devices only. Keyed by session id, not
 * slot: an entry a closed session left is no later session's. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, struct ezio_dev_key);
  __type(value, __u8);
} target_devs SEC(".maps");

/* Kernel dev_t is MAJOR << 20 | MINOR. */
static __always_inline __u32 inode_dev(struct inode* inode) {
  return BPF_CORE_READ(inode, i_sb, s_dev);
}

/* The block device under an inode's file system (btrfs's s_dev is an anonymous device, so this is
 * what block requests can be matched with). */
static __always_inline __u32 inode_bdev(struct inode* inode) {
  return BPF_CORE_READ(inode, i_sb, s_bdev, bd_dev);
}

/* An inode's number and device for the programs that run once per page (dirtied, added, ext4's
 * write_end), by direct loads of a tracepoint's BTF pointer: ~20 ns less per page than the probe
 * reads above. The price is start-up: a pointer loaded from a trusted one (a tp_btf argument, the
 * task's BTF pointer; here i_sb when inode is the argument) costs the 6.x verifier four linear
 * searches of the kernel's BTF by name, ~0.4 ms each, for every verifier path that reaches the
 * load. So the hot programs make such a load once, before any branch, and everything off the
 * per-page path keeps its probe reads. */
static __always_inline void tp_inode_ident(struct inode* inode, __u64* ino, __u32* dev) {
  *ino = inode->i_ino;
  *dev = inode->i_sb->s_dev;
}

static __always_inline void note_target_dev(__u32 session, __u32 dev) {
  struct ezio_dev_key key = {.dev = dev, .session = session};
  if (!dev || bpf_map_lookup_elem(&target_devs, &key)) return;
  /* The session's totals list its devices: added inside its gate (common.bpf.h, in_flight). */
  if (!enter_session(session)) return;
  __u8 one = 1;
  bpf_map_update_elem(&target_devs, &key, &one, BPF_ANY);
  leave_session(session);
}

/* Fills *who with the current thread, traced (state t), with the call it is in. */
static __always_inline void cause_of(const struct ezio_task* t, struct ezio_cause* who) {
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  who->pid = pid_tgid >> 32;
  who->tid = (__u32)pid_tgid;
  who->call_id = call_id_of(t);
  who->session = t->session;
  who->pad = 0;
}

/* Fills *who with the current thread if it is traced, with the call it is in. */
static __always_inline bool current_cause(struct ezio_cause* who, __u32 layer) {
  struct ezio_task* t = traced_task(layer);
  if (!t) return false;
  cause_of(t, who);
  return true;
}

#define EZIO_S_IFMT 00170000
#define EZIO_S_IFREG 0100000
#define EZIO_S_IFBLK 0060000

/* Whether a file system is mounted on the block device of this (block device) inode: its own page
 * cache then holds ext4's bitmaps, inode tables and directories, every process's metadata in
 * shared pages, whose writeback cannot be traced to one process's dirtying. Otherwise the pages
 * are what someone wrote to the raw device (mkfs, dd), which an exclusive open (a holder without
 * holder ops) does not change. Up to 6.5 the device points to the super block mounted on it
 * (bd_super); since, a file system holds its device with fs_holder_ops. */
static __always_inline bool fs_on_bdev(struct inode* inode) {
  struct block_device___bd_super {
    struct super_block* bd_super;
  } __attribute__((preserve_access_index));
  /* A kernel whose BTF lacks the type (block/bdev.c's): every block device counts as mounted. */
  if (!bpf_core_type_exists(struct bdev_inode)) return true;
  struct bdev_inode* bi =
      (void*)((char*)inode - bpf_core_field_offset(struct bdev_inode, vfs_inode));
  struct block_device* bdev = &bi->bdev;
  struct block_device___bd_super* old = (void*)bdev;
  if (bpf_core_field_exists(old->bd_super)) return BPF_CORE_READ(old, bd_super) != 0;
  if (bpf_core_field_exists(bdev->bd_holder_ops)) return BPF_CORE_READ(bdev, bd_holder_ops) != 0;
  return BPF_CORE_READ(bdev, bd_holder) != 0;
}

#define EZIO_BTRFS_SUPER_MAGIC 0x9123683E
#define EZIO_BTRFS_BTREE_INODE_OBJECTID 1

/* btrfs's btree inode, whose pages hold the file system's trees: a writer dirties them itself
 * (fsync's log tree), whatever the i_mode the kernel gives it (the exactness test saw them
 * counted as a regular file's). */
static __always_inline bool btrfs_btree_inode(struct inode* inode) {
  return BPF_CORE_READ(inode, i_ino) == EZIO_BTRFS_BTREE_INODE_OBJECTID &&
         BPF_CORE_READ(inode, i_sb, s_magic) == EZIO_BTRFS_SUPER_MAGIC;
}

/* Whether the writeback of inode's pages can belong to the one process that dirtied them: a
 * regular file's, or a raw block device's, data. Not metadata: the pages of a block device a file
 * system is mounted on, a directory's, btrfs's btree inode. mode: the inode's i_mode. */
static __always_inline bool private_pages(struct inode* inode, __u32 mode) {
  __u32 type = mode & EZIO_S_IFMT;
  if (type == EZIO_S_IFREG) return !btrfs_btree_inode(inode);
  return type == EZIO_S_IFBLK && !fs_on_bdev(inode);
}

/* Called for every page dirtied: a write of 1 MiB dirties 256. When the inode already has its
 * entry, only the cause changes, in place: an LRU update per page would cost more than the rest.
 * ino and dev: the inode's (tp_inode_ident). */
static __always_inline void note_dirtier(struct inode* inode, __u64 ino, __u32 dev,
                                         const struct ezio_cause* who) {
  __u64 key = (__u64)inode;
  struct ezio_dirtier* known = bpf_map_lookup_elem(&dirtiers, &key);
  if (known && known->ino == ino && known->dev == dev) {
    known->who = *who;
    return;
  }
  struct ezio_dirtier d = {};
  d.who = *who;
  d.ino = ino;
  d.dev = dev;
  if (bpf_map_update_elem(&dirtiers, &key, &d, BPF_ANY)) count_drop(who->session, EZIO_LAYER_BLOCK);
  note_target_dev(who->session, inode_bdev(inode));
}

/* The cause an inode-keyed table (dirtiers, cache_owners) holds for inode, if its entry is for
 * this very file and not for a freed inode whose memory was reused, and its session is live. */
static __always_inline bool find_inode_cause(void* table, struct inode* inode,
                                             struct ezio_cause* who) {
  if (!inode) return false;
  __u64 key = (__u64)inode;
  struct ezio_dirtier* d = bpf_map_lookup_elem(table, &key);
  if (!d) return false;
  if (d->ino != BPF_CORE_READ(inode, i_ino) || d->dev != inode_dev(inode)) return false;
  *who = d->who;
  return session_live(who->session);
}

static __always_inline bool find_dirtier(struct inode* inode, struct ezio_cause* who) {
  return find_inode_cause(&dirtiers, inode, who);
}

/* The file inode a page-cache page belongs to; 0 for anonymous or movable pages (the low bits of
 * page->mapping tag those: PAGE_MAPPING_ANON / PAGE_MAPPING_MOVABLE). */
static __always_inline struct inode* page_inode(struct page* page) {
  if (!page) return 0;
  struct address_space* mapping = BPF_CORE_READ(page, mapping);
  if (!mapping || ((unsigned long)mapping & 3)) return 0;
  return BPF_CORE_READ(mapping, host);
}

/* The inode of the first page a write bio carries; 0 when it carries no page-cache page (direct
 * I/O from anonymous memory, an empty flush). */
static __always_inline struct inode* bio_inode(struct bio* bio) {
  /* An empty bio (a flush) may have a vector array with nothing valid in it. */
  if (!bio || !BPF_CORE_READ(bio, bi_iter.bi_size)) return 0;
  struct bio_vec* vec = BPF_CORE_READ(bio, bi_io_vec);
  if (!vec) return 0;
  return page_inode(BPF_CORE_READ(vec, bv_page));
}

#endif
