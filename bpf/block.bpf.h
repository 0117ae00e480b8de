/* Block layer: one record per request the driver completed, keyed by struct request * from its
 * creation to its completion. Bios merged into a request create nothing (block_rq_merge frees the
 * absorbed request); a split bio gives several requests, each counted, as the disk statistics do.
 * Attribution happens where the request is created (block_io_start runs in the submitting
 * context), never at completion (interrupt or driver context). */
#ifndef EZIO_BLOCK_BPF_H
#define EZIO_BLOCK_BPF_H

#include "attribution.bpf.h"
#include "common.bpf.h"

struct blk_req_state {
  struct ezio_cause who;
  __u64 t_queue;
  __u64 t_insert;
  __u64 t_issue;
  __u64 sector;
  __u32 bytes;
  __u32 cause; /* enum ezio_block_cause */
};

/* Entries allocated as requests come (a few per millisecond at most), not preallocated: 32768
 * entries would cost megabytes of zeroed pages at every start for the rare machine with that many
 * requests in flight. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 32768);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u64); /* struct request * */
  __type(value, struct blk_req_state);
} block_reqs SEC(".maps");

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

#define EZIO_REQ_OP_MASK 0xff

static __always_inline __u32 rq_dev(struct request* rq) {
  struct block_device* part = BPF_CORE_READ(rq, part);
  if (part) return BPF_CORE_READ(part, bd_dev);
  return BPF_CORE_READ(rq, q, disk, part0, bd_dev);
}

static __always_inline bool rq_wants_flush(__u32 cmd_flags) {
  __u32 preflush = 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH);
  __u32 fua = 1u << bpf_core_enum_value(enum req_flag_bits, __REQ_FUA);
  return (cmd_flags & EZIO_REQ_OP_MASK) == REQ_OP_FLUSH || (cmd_flags & (preflush | fua));
}

/* The traced thread that caused the request being created in the current context, if any. */
static __always_inline __u32 attribute_request(struct request* rq, struct ezio_cause* who) {
  bool traced = current_cause(who, EZIO_LAYER_BLOCK);
  __u32 op = BPF_CORE_READ(rq, cmd_flags) & EZIO_REQ_OP_MASK;
  if (op != REQ_OP_WRITE) return traced ? EZIO_CAUSE_SUBMITTER : EZIO_CAUSE_NONE;
  struct bio* bio = BPF_CORE_READ(rq, bio);
  if (writes_shared_pages(bio)) return EZIO_CAUSE_NONE;
  if (traced) return EZIO_CAUSE_SUBMITTER;
  /* Someone else writes: writeback of pages a traced thread dirtied. Reads are never
   * attributed this way, so another process reading a file the target wrote stays its own. */
  return find_dirtier(bio_inode(bio), who) ? EZIO_CAUSE_DIRTIER : EZIO_CAUSE_NONE;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(ezio_blk_io_start, struct request* rq) {
  struct blk_req_state s = {};
  s.cause = attribute_request(rq, &s.who);
  /* Unattributed requests get their state at issue; keeping the table to the target's requests
   * until then keeps its cost off other processes' bursts. */
  if (s.cause == EZIO_CAUSE_NONE) return 0;
  s.t_queue = bpf_ktime_get_ns();
  __u32 dev = rq_dev(rq);
  note_target_dev(s.who.session, dev);
  if (rq_wants_flush(BPF_CORE_READ(rq, cmd_flags))) {
    bpf_map_update_elem(&flush_cause, &dev, &s.who, BPF_ANY);
  }
  __u64 key = (__u64)rq;
  if (bpf_map_update_elem(&block_reqs, &key, &s, BPF_ANY))
    count_drop(s.who.session, EZIO_LAYER_BLOCK);
  return 0;
}

/* Before 6.5 (no block_io_start): block_getrq fires in the submitting context right after the
 * request for bio was allocated, and bio becomes the request's first bio; the state waits here,
 * keyed by the bio, until insert or issue finds it through rq->bio. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 32768);
  __type(key, __u64); /* struct bio * */
  __type(value, struct blk_req_state);
} block_bios SEC(".maps");

SEC("tp_btf/block_getrq")
int BPF_PROG(ezio_blk_getrq, struct bio* bio) {
  struct blk_req_state s = {};
  if (!current_cause(&s.who, EZIO_LAYER_BLOCK)) return 0;
  __u32 opf = BPF_CORE_READ(bio, bi_opf);
  if ((opf & EZIO_REQ_OP_MASK) == REQ_OP_WRITE && writes_shared_pages(bio)) return 0;
  s.cause = EZIO_CAUSE_SUBMITTER;
  s.t_queue = bpf_ktime_get_ns();
  __u32 dev = BPF_CORE_READ(bio, bi_bdev, bd_dev);
  note_target_dev(s.who.session, dev);
  if (rq_wants_flush(opf)) bpf_map_update_elem(&flush_cause, &dev, &s.who, BPF_ANY);
  __u64 key = (__u64)bio;
  if (bpf_map_update_elem(&block_bios, &key, &s, BPF_ANY))
    count_drop(s.who.session, EZIO_LAYER_BLOCK);
  return 0;
}

static __always_inline struct blk_req_state* req_from_bio(struct request* rq) {
  __u64 bkey = (__u64)BPF_CORE_READ(rq, bio);
  if (!bkey) return 0;
  struct blk_req_state* b = bpf_map_lookup_elem(&block_bios, &bkey);
  if (!b) return 0;
  __u64 key = (__u64)rq;
  if (bpf_map_update_elem(&block_reqs, &key, b, BPF_ANY))
    count_drop(b->who.session, EZIO_LAYER_BLOCK);
  bpf_map_delete_elem(&block_bios, &bkey);
  return bpf_map_lookup_elem(&block_reqs, &key);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(ezio_blk_rq_insert, struct request* rq) {
  __u64 key = (__u64)rq;
  struct blk_req_state* s = bpf_map_lookup_elem(&block_reqs, &key);
  if (!s) s = req_from_bio(rq);
  if (s && !s->t_insert) s->t_insert = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(ezio_blk_rq_merge, struct request* rq) {
  /* rq was absorbed by a neighbour and is freed without completing. */
  __u64 key = (__u64)rq;
  bpf_map_delete_elem(&block_reqs, &key);
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ezio_blk_rq_issue, struct request* rq) {
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct blk_req_state* s = bpf_map_lookup_elem(&block_reqs, &key);
  if (!s) s = req_from_bio(rq);
  if (!s) {
    struct blk_req_state fresh = {};
    fresh.t_queue = now;
    __u32 cmd_flags = BPF_CORE_READ(rq, cmd_flags);
    if ((cmd_flags & EZIO_REQ_OP_MASK) == REQ_OP_FLUSH) {
      __u32 dev = rq_dev(rq);
      struct ezio_cause* who = bpf_map_lookup_elem(&flush_cause, &dev);
      /* The asker's session closed meanwhile: the flush is no one's. */
      if (who && session_live(who->session)) {
        fresh.who = *who;
        fresh.cause = EZIO_CAUSE_FLUSH;
        bpf_map_delete_elem(&flush_cause, &dev);
      }
    }
    if (bpf_map_update_elem(&block_reqs, &key, &fresh, BPF_ANY)) {
      if (fresh.cause != EZIO_CAUSE_NONE) count_drop(fresh.who.session, EZIO_LAYER_BLOCK);
      return 0;
    }
    s = bpf_map_lookup_elem(&block_reqs, &key);
    if (!s) return 0;
  }
  if (!s->t_issue) { /* a requeued request keeps its first issue time */
    s->t_issue = now;
    s->sector = BPF_CORE_READ(rq, __sector);
    s->bytes = BPF_CORE_READ(rq, __data_len);
  }
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ezio_blk_rq_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  __u64 key = (__u64)rq;
  struct blk_req_state* s = bpf_map_lookup_elem(&block_reqs, &key);
  if (!s) return 0;
  /* Not issued: a request the flush machinery finished without sending it to the driver (an
   * empty PREFLUSH bio's own request); the disk statistics do not count those either. */
  if (!s->t_issue) goto out;
  __u32 dev = rq_dev(rq);
  if (s->cause == EZIO_CAUSE_NONE) {
    struct ezio_block_unattributed* u = bpf_map_lookup_elem(&block_unattributed, &dev);
    if (u) {
      __sync_fetch_and_add(&u->requests, 1);
      __sync_fetch_and_add(&u->bytes, s->bytes);
    } else {
      struct ezio_block_unattributed first = {1, s->bytes};
      /* Another CPU may have created it meanwhile: then add to theirs. */
      if (bpf_map_update_elem(&block_unattributed, &dev, &first, BPF_NOEXIST)) {
        u = bpf_map_lookup_elem(&block_unattributed, &dev);
        if (u) {
          __sync_fetch_and_add(&u->requests, 1);
          __sync_fetch_and_add(&u->bytes, s->bytes);
        } else {
          count_global_drop(EZIO_LAYER_BLOCK);
        }
      }
    }
    goto out;
  }
  __u32 session = s->who.session;
  struct ezio_block_rec* r = reserve(session, sizeof(*r), EZIO_LAYER_BLOCK);
  if (!r) goto out;
  fill_header(&r->h, EZIO_REC_BLOCK, EZIO_LAYER_BLOCK, sizeof(*r), s->who.pid, s->who.tid);
  r->call_id = s->who.call_id;
  r->t_queue = s->t_queue;
  r->t_insert = s->t_insert;
  r->t_issue = s->t_issue;
  r->t_complete = bpf_ktime_get_ns();
  r->sector = s->sector;
  r->dev = dev;
  r->bytes = s->bytes;
  r->cmd_flags = BPF_CORE_READ(rq, cmd_flags);
  r->error = error;
  r->cause = s->cause;
  r->pad = 0;
  if (bpf_probe_read_kernel_str(r->disk, sizeof(r->disk), BPF_CORE_READ(rq, q, disk, disk_name)) <
      0) {
    r->disk[0] = 0;
  }
  submit(session, r);
out:
  bpf_map_delete_elem(&block_reqs, &key);
  return 0;
}

#endif
