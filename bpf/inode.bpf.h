// SPDX-License-Identifier: GPL-2.0-only
/* Inodes, pages and bios as the kernel holds them: whose device, whose file, whether a file's
 * pages are one process's data or shared metadata, how many pages a folio holds. No maps: the
 * recorder's attribution (attribution.bpf.h) and the always-on metrics (metrics.bpf.c) decide the
 * owner of a write from the same facts. */
#ifndef EZIO_INODE_BPF_H
#define EZIO_INODE_BPF_H

#include "vmlinux.h"
/* After the kernel's types, which it uses. */
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

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
static __always_inline bool btrfs_btree_ino(struct inode* inode, __u64 ino) {
  return ino == EZIO_BTRFS_BTREE_INODE_OBJECTID &&
         BPF_CORE_READ(inode, i_sb, s_magic) == EZIO_BTRFS_SUPER_MAGIC;
}
static __always_inline bool btrfs_btree_inode(struct inode* inode) {
  return btrfs_btree_ino(inode, BPF_CORE_READ(inode, i_ino));
}

/* Whether the writeback of inode's pages can belong to the one process that dirtied them: a
 * regular file's, or a raw block device's, data. Not metadata: the pages of a block device a file
 * system is mounted on, a directory's, btrfs's btree inode. mode: the inode's i_mode. */
static __always_inline bool private_pages(struct inode* inode, __u32 mode) {
  __u32 type = mode & EZIO_S_IFMT;
  if (type == EZIO_S_IFREG) return !btrfs_btree_inode(inode);
  return type == EZIO_S_IFBLK && !fs_on_bdev(inode);
}

/* The same, for a per-page hook that has the inode's number already (tp_inode_ident): a regular
 * file's costs no probe read then. */
static __always_inline bool private_pages_ino(struct inode* inode, __u32 mode, __u64 ino) {
  __u32 type = mode & EZIO_S_IFMT;
  if (type == EZIO_S_IFREG) return !btrfs_btree_ino(inode, ino);
  return type == EZIO_S_IFBLK && !fs_on_bdev(inode);
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

/* folio_nr_pages() without the inline helpers: order-0 folios have no PG_head; a large folio's size
 * is _nr_pages (64-bit, newer kernels), else _folio_nr_pages or _folio_order (6.1), else the order
 * in the low byte of _flags_1 (in between). 6.1 has a _flags_1 too, but there it holds the tail
 * page's flags, not the order: the order fields are tried first.
 * The layouts are flavours, not vmlinux.h's struct folio: 6.18 wraps the flags word in
 * memdesc_flags_t and libbpf refuses a field whose kind differs between the object and the kernel
 * (a struct against 6.1's unsigned long: "failed to resolve CO-RE relocation ... struct
 * folio.flags"), so each kernel reads it through the flavour that matches it. */
static __always_inline __u64 folio_pages(struct folio* folio) {
  struct ezio_folio_flags {
    unsigned long f;
  } __attribute__((preserve_access_index));
  struct folio___memdesc {
    struct ezio_folio_flags flags;
    unsigned int _nr_pages;
  } __attribute__((preserve_access_index));
  struct folio___word {
    unsigned long flags;
    unsigned long _flags_1;
    unsigned char _folio_order;
    unsigned int _folio_nr_pages;
  } __attribute__((preserve_access_index));
  struct folio___memdesc* fm = (void*)folio;
  struct folio___word* fw = (void*)folio;

  unsigned long flags = bpf_core_field_exists(fm->flags.f) ? fm->flags.f : fw->flags;
  if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head)))) return 1;
  if (bpf_core_field_exists(fm->_nr_pages)) return fm->_nr_pages;
  if (bpf_core_field_exists(fw->_folio_nr_pages)) return fw->_folio_nr_pages;
  if (bpf_core_field_exists(fw->_folio_order)) return 1ul << fw->_folio_order;
  return 1ul << (fw->_flags_1 & 0xff);
}

#endif
