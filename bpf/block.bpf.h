// SPDX-License-Identifier: GPL-2.0-only
/* Block layer: one record per request the driver completed and per recording session whose
 * bios are in it, keyed by struct request * until its completion. Bios merged into a request create
 * no request (block_rq_merge frees an absorbed one); a split bio gives several requests, each
 * counted, as the disk statistics do. A request may carry the bios of several processes (a
 * flusher's plug merges neighbouring files): each bio's owner is decided where it enters a request
 * (block_io_start, block_getrq, block_bio_backmerge/frontmerge, in the submitting context), and at
 * the request's issue each session is charged the bytes of its own bios only; the rest is a
 * count, never attributed. Nothing is decided at completion (interrupt or driver context). */
#ifndef EZIO_BLOCK_BPF_H
#define EZIO_BLOCK_BPF_H

#include "attribution.bpf.h"
#include "common.bpf.h"
#include "request.bpf.h"

/* Bios looked through per request: a request holds at most max_sectors of them. */
#define EZIO_BLOCK_WALK_MAX 4096

/* Entries allocated as requests come (a few per millisecond at most), not preallocated: 32768
 * entries would cost megabytes of zeroed pages at every start for the rare machine with that many
 * requests in flight. Until its issue, only a request a traced thread created has one. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 32768);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u64); /* struct request * */
  __type(value, struct ezio_blk_req);
} block_reqs SEC(".maps");

/* The owner of a bio of a traced thread's, from where it entered a request to the first issue of
 * the request holding it. loose: the request may have no entry in block_reqs (the bio was merged
 * into a request someone else created, or that request was absorbed by another, or the kernel has
 * no block_io_start), so requests without one are looked through at issue while any is. */
struct blk_bio_owner {
  struct ezio_cause who;
  __u64 t_queue;
  __u32 cause;
  __u32 loose;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u64); /* struct bio * */
  __type(value, struct blk_bio_owner);
} block_bio_owners SEC(".maps");

/* Loose entries of block_bio_owners: 0 almost always, so other processes' requests are not looked
 * through. */
__s64 block_loose_bios = 0;

/* Read by the recorder at the end: requests completed on each device that no traced thread
 * caused (other processes, journal commits, metadata writeback). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32); /* dev_t */
  __type(value, struct ezio_block_unattributed);
} block_unattributed SEC(".maps");

/* The last traced thread that asked a device for a cache flush. The flush request the block layer
 * sends for it (blk-flush.c's per-queue flush_rq) never passes block_io_start and is issued from
 * kblockd, so it is matched to the request that wanted it through this table. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32); /* dev_t */
  __type(value, struct ezio_cause);
} flush_cause SEC(".maps");

/* Who owns bio, entering a request in the current context: the traced thread submitting it, or,
 * for a write someone else submits (a flusher kworker), the traced thread that last dirtied its
 * file's pages. Reads are never attributed that way, so another process reading a file the target
 * wrote stays its own. Writes of shared metadata pages (private_pages) are no one's, whoever
 * submits them: a traced thread's sync() writes the whole device's metadata from its own context.
 * op: the operation (the request's, for a request without bio). */
static __always_inline __u32 bio_cause(struct bio* bio, __u32 op, struct ezio_cause* who) {
  bool traced = current_cause(who, EZIO_LAYER_BLOCK);
  if (op != REQ_OP_WRITE) return traced ? EZIO_CAUSE_SUBMITTER : EZIO_CAUSE_NONE;
  struct inode* inode = bio_inode(bio);
  if (!traced && !find_dirtier(inode, who)) return EZIO_CAUSE_NONE;
  if (inode && !private_pages(inode, BPF_CORE_READ(inode, i_mode))) return EZIO_CAUSE_NONE;
  return traced ? EZIO_CAUSE_SUBMITTER : EZIO_CAUSE_DIRTIER;
}

/* Notes the owner of bio, which just entered a request. An empty bio (a flush) has no bytes to
 * charge: the request's owner, or flush_cause, stands for it. */
static __always_inline void note_bio_owner(struct bio* bio, const struct ezio_cause* who,
                                           __u32 cause, __u64 now, __u32 loose) {
  if (!bio || !BPF_CORE_READ(bio, bi_iter.bi_size)) return;
  struct blk_bio_owner o = {.who = *who, .t_queue = now, .cause = cause, .loose = loose};
  __u64 key = (__u64)bio;
  struct blk_bio_owner* stale = bpf_map_lookup_elem(&block_bio_owners, &key);
  if (stale) { /* a freed bio's, never issued (a request that failed before): replaced */
    if (stale->loose != loose) __sync_fetch_and_add(&block_loose_bios, loose ? 1 : -1);
    *stale = o;
    return;
  }
  if (bpf_map_update_elem(&block_bio_owners, &key, &o, BPF_NOEXIST)) {
    count_drop(who->session, EZIO_LAYER_BLOCK);
    return;
  }
  if (loose) __sync_fetch_and_add(&block_loose_bios, 1);
}

/* Takes bio's owner out of the table into *o; false when it has none. */
static __always_inline bool take_bio_owner(struct bio* bio, struct blk_bio_owner* o) {
  __u64 key = (__u64)bio;
  struct blk_bio_owner* found = bpf_map_lookup_elem(&block_bio_owners, &key);
  if (!found) return false;
  *o = *found;
  if (bpf_map_delete_elem(&block_bio_owners, &key)) return false; /* taken meanwhile */
  if (o->loose) __sync_fetch_and_add(&block_loose_bios, -1);
  return true;
}

/* Adds a bio of bytes owned by o to its session's part of the request. */
static __always_inline void charge_owner(struct ezio_blk_req* s, const struct blk_bio_owner* o,
                                         __u32 bytes) {
  __u32 n = s->owners_n;
#pragma unroll
  for (int i = 0; i < EZIO_BLOCK_OWNERS; ++i) {
    struct ezio_blk_owner* p = &s->owners[i];
    if (i == n) {
      p->who = o->who;
      p->t_queue = o->t_queue;
      p->bytes = bytes;
      p->cause = o->cause;
      s->owners_n = n + 1;
      return;
    }
    if (p->who.session == o->who.session) {
      p->bytes += bytes;
      if (o->t_queue < p->t_queue) p->t_queue = o->t_queue;
      return;
    }
  }
  count_drop(o->who.session, EZIO_LAYER_BLOCK);
}

struct bio_walk {
  struct bio* bio; /* the next bio of the request's chain */
  struct ezio_blk_req s;
};

/* One bio of a request being issued: its bytes to its owner's session, if it has one. A bpf_loop
 * callback (the chain's length is the request's). */
static long charge_step(__u64 i, void* ctx) {
  struct bio_walk* w = ctx;
  struct bio* bio = w->bio;
  if (!bio) return 1;
  w->bio = BPF_CORE_READ(bio, bi_next);
  struct blk_bio_owner o;
  if (take_bio_owner(bio, &o)) charge_owner(&w->s, &o, BPF_CORE_READ(bio, bi_iter.bi_size));
  return 0;
}

/* One bio of a request absorbed by another (block_rq_merge), or completed without issue: its
 * owner entry, if any, is made loose, or forgotten. */
struct bio_mark {
  struct bio* bio;
  bool forget;
};

static long mark_step(__u64 i, void* ctx) {
  struct bio_mark* m = ctx;
  struct bio* bio = m->bio;
  if (!bio) return 1;
  m->bio = BPF_CORE_READ(bio, bi_next);
  struct blk_bio_owner o;
  if (m->forget) {
    take_bio_owner(bio, &o);
    return 0;
  }
  __u64 key = (__u64)bio;
  struct blk_bio_owner* found = bpf_map_lookup_elem(&block_bio_owners, &key);
  if (found && !found->loose) {
    found->loose = 1;
    __sync_fetch_and_add(&block_loose_bios, 1);
  }
  return 0;
}

static __always_inline void mark_bios(struct request* rq, bool forget) {
  struct bio_mark m = {.bio = BPF_CORE_READ(rq, bio), .forget = forget};
  if (m.bio) bpf_loop(EZIO_BLOCK_WALK_MAX, mark_step, &m, 0);
}

static __always_inline void note_flush_asker(__u32 cmd_flags, __u32 dev,
                                             const struct ezio_cause* who) {
  if (rq_wants_flush(cmd_flags)) bpf_map_update_elem(&flush_cause, &dev, who, BPF_ANY);
}

SEC("tp_btf/block_io_start")
int BPF_PROG(ezio_blk_io_start, struct request* rq) {
  struct ezio_cause who = {};
  struct bio* bio = BPF_CORE_READ(rq, bio);
  __u32 cmd_flags = BPF_CORE_READ(rq, cmd_flags);
  __u32 cause = bio_cause(bio, cmd_flags & EZIO_REQ_OP_MASK, &who);
  /* Other processes' requests get their state at issue; keeping the table to the target's
   * requests until then keeps its cost off other processes' bursts. */
  if (cause == EZIO_CAUSE_NONE) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u32 dev = rq_dev(rq);
  note_target_dev(who.session, dev);
  note_flush_asker(cmd_flags, dev, &who);
  /* The creator is the first owner even when a bio merged in front of its own, and stays one
   * for a request without bio. */
  struct ezio_blk_req s = {};
  s.owners_n = 1;
  s.owners[0].who = who;
  s.owners[0].t_queue = now;
  s.owners[0].cause = cause;
  __u64 key = (__u64)rq;
  if (bpf_map_update_elem(&block_reqs, &key, &s, BPF_ANY)) {
    count_drop(who.session, EZIO_LAYER_BLOCK);
    return 0;
  }
  note_bio_owner(bio, &who, cause, now, 0);
  return 0;
}

/* Before 6.5 (no block_io_start): block_getrq fires in the submitting context right after the
 * request for bio was allocated, and bio becomes the request's first bio; the request itself is
 * not known here, so the bio's owner is loose. */
SEC("tp_btf/block_getrq")
int BPF_PROG(ezio_blk_getrq, struct bio* bio) {
  struct ezio_cause who = {};
  __u32 opf = BPF_CORE_READ(bio, bi_opf);
  __u32 cause = bio_cause(bio, opf & EZIO_REQ_OP_MASK, &who);
  if (cause == EZIO_CAUSE_NONE) return 0;
  __u32 dev = BPF_CORE_READ(bio, bi_bdev, bd_dev);
  note_target_dev(who.session, dev);
  note_flush_asker(opf, dev, &who);
  note_bio_owner(bio, &who, cause, bpf_ktime_get_ns(), 1);
  return 0;
}

/* A bio merged into a request that exists already, in the submitting context (a plug's, or the
 * scheduler's queue): the request is not an argument (since 5.11), so the bio's owner is loose. */
static __always_inline void note_merged_bio(struct bio* bio) {
  struct ezio_cause who = {};
  __u32 cause = bio_cause(bio, BPF_CORE_READ(bio, bi_opf) & EZIO_REQ_OP_MASK, &who);
  if (cause == EZIO_CAUSE_NONE) return;
  note_target_dev(who.session, BPF_CORE_READ(bio, bi_bdev, bd_dev));
  note_bio_owner(bio, &who, cause, bpf_ktime_get_ns(), 1);
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(ezio_blk_bio_backmerge, struct bio* bio) {
  note_merged_bio(bio);
  return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(ezio_blk_bio_frontmerge, struct bio* bio) {
  note_merged_bio(bio);
  return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(ezio_blk_rq_insert, struct request* rq) {
  __u64 key = (__u64)rq;
  struct ezio_blk_req* s = bpf_map_lookup_elem(&block_reqs, &key);
  if (s && !s->t_insert) s->t_insert = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(ezio_blk_rq_merge, struct request* rq) {
  /* rq was absorbed by a neighbour and is freed without completing; its bios (still rq->bio
   * here) now belong to the neighbour, which may have no state. */
  __u64 key = (__u64)rq;
  if (!bpf_map_lookup_elem(&block_reqs, &key)) return 0;
  bpf_map_delete_elem(&block_reqs, &key);
  mark_bios(rq, false);
  return 0;
}

/* The traced thread that asked the device for the flush the block layer now issues. */
static __always_inline void charge_flush(struct request* rq, struct ezio_blk_req* s, __u64 now) {
  __u32 dev = rq_dev(rq);
  struct ezio_cause* who = bpf_map_lookup_elem(&flush_cause, &dev);
  /* The asker's session closed meanwhile: the flush is no one's. */
  if (!who || !session_live(who->session)) return;
  s->owners[0].who = *who;
  s->owners[0].t_queue = now;
  s->owners[0].cause = EZIO_CAUSE_FLUSH;
  s->owners_n = 1;
  bpf_map_delete_elem(&flush_cause, &dev);
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ezio_blk_rq_issue, struct request* rq) {
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct ezio_blk_req* old = bpf_map_lookup_elem(&block_reqs, &key);
  if (old && old->t_issue) return 0; /* a requeued request keeps its first issue */
  struct bio_walk w = {};
  if (old) w.s = *old;
  w.s.t_issue = now;
  w.s.sector = BPF_CORE_READ(rq, __sector);
  w.s.bytes = BPF_CORE_READ(rq, __data_len);
  w.bio = BPF_CORE_READ(rq, bio);
  /* The chain is final at issue. A request no traced thread created holds a bio of one only
   * while some owner is loose. */
  if (w.bio && (old || *(volatile __s64*)&block_loose_bios > 0)) {
    bpf_loop(EZIO_BLOCK_WALK_MAX, charge_step, &w, 0);
  } else if (!old && (BPF_CORE_READ(rq, cmd_flags) & EZIO_REQ_OP_MASK) == REQ_OP_FLUSH) {
    charge_flush(rq, &w.s, now);
  }
  if (bpf_map_update_elem(&block_reqs, &key, &w.s, BPF_ANY)) {
#pragma unroll
    for (int i = 0; i < EZIO_BLOCK_OWNERS; ++i) {
      if (i < w.s.owners_n) count_drop(w.s.owners[i].who.session, EZIO_LAYER_BLOCK);
    }
  }
  return 0;
}

static __always_inline void count_unattributed(__u32 dev, __u64 requests, __u64 bytes,
                                               __u64 not_issued) {
  struct ezio_block_unattributed* u = bpf_map_lookup_elem(&block_unattributed, &dev);
  if (!u) {
    struct ezio_block_unattributed first = {requests, bytes, not_issued};
    if (!bpf_map_update_elem(&block_unattributed, &dev, &first, BPF_NOEXIST)) return;
    /* Another CPU created it meanwhile: then add to theirs. */
    u = bpf_map_lookup_elem(&block_unattributed, &dev);
    if (!u) {
      count_global_drop(EZIO_LAYER_BLOCK);
      return;
    }
  }
  __sync_fetch_and_add(&u->requests, requests);
  __sync_fetch_and_add(&u->bytes, bytes);
  __sync_fetch_and_add(&u->not_issued, not_issued);
}

/* The record of one owner's part of a completed request, into its session's ring. */
static __always_inline void record_part(struct request* rq, const struct ezio_blk_req* s,
                                        const struct ezio_blk_owner* o, __u32 dev, int error,
                                        __u64 now) {
  __u32 session = o->who.session;
  struct ezio_block_rec* r = reserve(session, sizeof(*r), EZIO_LAYER_BLOCK);
  if (!r) return;
  fill_header(&r->h, EZIO_REC_BLOCK, EZIO_LAYER_BLOCK, sizeof(*r), o->who.pid, o->who.tid);
  r->call_id = o->who.call_id;
  r->t_queue = o->t_queue;
  r->t_insert = s->t_insert;
  r->t_issue = s->t_issue;
  r->t_complete = now;
  r->sector = s->sector;
  r->dev = dev;
  r->bytes = o->bytes;
  r->shared_bytes = s->bytes > o->bytes ? s->bytes - o->bytes : 0;
  r->cmd_flags = BPF_CORE_READ(rq, cmd_flags);
  r->error = error;
  r->cause = o->cause;
  if (bpf_probe_read_kernel_str(r->disk, sizeof(r->disk), BPF_CORE_READ(rq, q, disk, disk_name)) <
      0) {
    r->disk[0] = 0;
  }
  submit(session, r);
}

/* A request never started (MQ_RQ_IDLE: blk_mq_start_request makes it in flight, a requeue idle
 * again until its next start) that the block layer completes all the same: an empty PREFLUSH
 * bio's own request, which the flush machinery ends once the flush request it stands for
 * (blk-flush.c's flush_rq, recorded) completed, or one that failed before it reached the driver.
 * Not a request of the device's, so not recorded, but /sys/block/<dev>/stat counts it (a write of
 * 0 sectors, beside the flush): counted per device. A request started once is not idle at its
 * completion, not even at the second completion of a flush sequence's data request (ended again,
 * 0 bytes, when its post-flush completes). */
static __always_inline void count_if_never_started(struct request* rq) {
  if (BPF_CORE_READ(rq, state) == bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IDLE)) {
    count_unattributed(rq_dev(rq), 0, 0, 1);
  }
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ezio_blk_rq_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  __u64 key = (__u64)rq;
  struct ezio_blk_req* s = bpf_map_lookup_elem(&block_reqs, &key);
  if (!s) { /* before 6.5 no request has an entry before its issue, the target's neither */
    count_if_never_started(rq);
    return 0;
  }
  /* Not issued (above), or issued before the programs were attached. */
  if (!s->t_issue) {
    mark_bios(rq, true);
    count_if_never_started(rq);
    goto out;
  }
  __u64 now = bpf_ktime_get_ns();
  __u32 dev = rq_dev(rq);
  __u32 owned = 0;
#pragma unroll
  for (int i = 0; i < EZIO_BLOCK_OWNERS; ++i) {
    if (i < s->owners_n) {
      owned += s->owners[i].bytes;
      record_part(rq, s, &s->owners[i], dev, error, now);
    }
  }
  /* What no traced thread owns is counted per device: a request of no one's whole, another
   * process's bios in a request of the target's by their bytes only. */
  if (!s->owners_n || owned < s->bytes) {
    count_unattributed(dev, s->owners_n ? 0 : 1, s->bytes > owned ? s->bytes - owned : 0, 0);
  }
out:
  bpf_map_delete_elem(&block_reqs, &key);
  return 0;
}

#endif
