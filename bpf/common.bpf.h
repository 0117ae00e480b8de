/* Maps and helpers shared by every layer's programs. Included once, by eziotrace.bpf.c. */
#ifndef EZIO_COMMON_BPF_H
#define EZIO_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "record.h"

char LICENSE[] SEC("license") = "GPL";

/* Bytes of unread data above which a submit wakes the consumer. Below it the consumer finds the
 * records at its next poll tick: one wake-up per record would cost more than the record itself. */
const volatile __u64 wakeup_bytes = 256 * 1024;

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 32 * 1024 * 1024); /* resized by the recorder before load */
} events SEC(".maps");

/* Events that could not be recorded, per layer: ring buffer full or a tracking table full. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, EZIO_LAYER_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} drops SEC(".maps");

enum { EZIO_PENDING_EXEC = 1, EZIO_ACTIVE = 2 };

/* Processes (TGIDs) of the target tree. The launched child enters as PENDING and becomes ACTIVE
 * when it execs, so the launcher's own pre-exec work is never recorded. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  /* Filled at forks only: allocated as it grows, not 5 MB cleared at every start. */
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, __u32);
  __type(value, __u8);
} traced SEC(".maps");

static __always_inline void count_drop(__u32 layer) {
  __u64* n = bpf_map_lookup_elem(&drops, &layer);
  if (n) *n += 1;
}

static __always_inline bool is_traced(__u32 tgid) {
  __u8* state = bpf_map_lookup_elem(&traced, &tgid);
  return state && *state == EZIO_ACTIVE;
}

static __always_inline void* reserve(__u64 size, __u32 layer) {
  void* rec = bpf_ringbuf_reserve(&events, size, 0);
  if (!rec) count_drop(layer);
  return rec;
}

/* Set by the record that wakes the recorder, cleared by the recorder before it drains the ring
 * buffer. A wake-up is an inter-processor interrupt (a VM exit under virtualisation, several µs):
 * while the recorder is behind, waking it at every record past the mark made the application
 * pay one per record (15% of the CPU of 8 fio writers), when one per drain is enough. */
__u32 recorder_woken = 0;

static __always_inline void submit(void* rec) {
  __u64 unread = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
  if (unread >= wakeup_bytes && !recorder_woken) {
    recorder_woken = 1; /* two CPUs may both wake it: harmless */
    bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
  } else {
    bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
  }
}

static __always_inline void fill_header(struct ezio_header* h, __u8 kind, __u8 layer, __u32 size,
                                        __u32 pid, __u32 tid) {
  h->version = EZIO_RECORD_VERSION;
  h->kind = kind;
  h->layer = layer;
  h->size = size;
  h->pid = pid;
  h->tid = tid;
}

#endif
