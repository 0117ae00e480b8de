// SPDX-License-Identifier: GPL-2.0-only
/* Attribution: which traced thread (and which of its calls) caused a piece of kernel I/O.
 * - The current thread, when it belongs to the target tree (synchronous I/O).
 * - For writeback submitted by someone else (flusher kworkers, syncfs helpers): the last traced
 *   thread that dirtied pages of the inode, remembered here when the page became dirty. */
#ifndef EZIO_ATTRIBUTION_BPF_H
#define EZIO_ATTRIBUTION_BPF_H

#include "common.bpf.h"
#include "inode.bpf.h"
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

#endif
