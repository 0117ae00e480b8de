// SPDX-License-Identifier: GPL-2.0-only
/* The series of what a thread counts call after call, cached in its own storage (docs/metrics.md,
 * "Cost"): a series a thread used gets a slot of a per-CPU array (the hot slots) and the thread
 * keeps the slot's index, so its next calls reach their counters with one array access instead
 * of a hash lookup. The job (cgroup, user) the slots were taken for is compared with the thread's
 * own at every event: a thread moved to another cgroup (or given another user) drops its slots and
 * is charged to its new job from its next call. Every series stays in the hash table `series`
 * (its key, the table's limit); the collector adds a slot's counters to its series. Included by
 * metrics.bpf.c after series_at. */
#ifndef EZIO_METRICS_CACHE_BPF_H
#define EZIO_METRICS_CACHE_BPF_H

/* A thread's cached slot: 0 unknown, EZIO_M_NO_SLOT none left (the hash table's value is used),
 * else the slot's index plus one. */
#define EZIO_M_NO_SLOT 0xffffffffu

/* The hot slots' counters, per CPU (no atomics); sized by the collector before the load. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, struct ezio_metric_value);
} slots SEC(".maps");

/* The slot of each series that has one. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct ezio_metric_key);
  __type(value, __u32);
} slot_of SEC(".maps");

/* The free slots, zeroed: all of them after the load, then those of ended cgroups (the collector
 * gives them back one snapshot after their series was dropped). */
struct {
  __uint(type, BPF_MAP_TYPE_QUEUE);
  __uint(max_entries, 1024);
  __type(value, __u32);
} free_slots SEC(".maps");

/* The slot of key (index plus one), taken from the free ones when it has none yet. */
static __always_inline __u32 slot_for(struct ezio_metric_key* key) {
  __u32* found = bpf_map_lookup_elem(&slot_of, key);
  if (found) return *found + 1;
  __u32 idx;
  if (bpf_map_pop_elem(&free_slots, &idx)) return EZIO_M_NO_SLOT;
  if (!bpf_map_update_elem(&slot_of, key, &idx, BPF_NOEXIST)) return idx + 1;
  /* Another CPU gave it one meanwhile (or the table is full): ours goes back. */
  bpf_map_push_elem(&free_slots, &idx, 0);
  found = bpf_map_lookup_elem(&slot_of, key);
  return found ? *found + 1 : EZIO_M_NO_SLOT;
}

/* The counters of key's series: the thread's cached slot, else the series (made when missing)
 * and, when one is free, a slot cached for the next call. */
static __always_inline struct ezio_metric_value* cached_series(struct ezio_metric_key* key,
                                                               __u32* slot) {
  __u32 known = *slot;
  if (known && known != EZIO_M_NO_SLOT) {
    __u32 idx = known - 1;
    struct ezio_metric_value* v = bpf_map_lookup_elem(&slots, &idx);
    if (v) return v;
  }
  struct ezio_metric_value* v = series_at(key);
  if (!v || known == EZIO_M_NO_SLOT) return v;
  known = slot_for(key);
  *slot = known;
  if (known == EZIO_M_NO_SLOT) return v;
  __u32 idx = known - 1;
  struct ezio_metric_value* hot = bpf_map_lookup_elem(&slots, &idx);
  return hot ? hot : v;
}

/* The thread's slots are for job j: those of another job (the thread moved to another cgroup, or
 * changed its user) are dropped. */
static __always_inline void cache_job(struct sc_start* s, struct job j) {
  if (s->c_cgroup == j.cgroup && s->c_uid == j.uid) return;
  s->c_cgroup = j.cgroup;
  s->c_uid = j.uid;
  __builtin_memset(s->sc_slot, 0, sizeof(s->sc_slot));
  __builtin_memset(s->seen[0].slot, 0, sizeof(s->seen[0].slot));
  __builtin_memset(s->seen[1].slot, 0, sizeof(s->seen[1].slot));
  __builtin_memset(s->pc_slot, 0, sizeof(s->pc_slot));
  __builtin_memset(s->fs_slot, 0, sizeof(s->fs_slot));
}

/* The current thread's state with its slots for job j; NULL when it has none (and create is 0). */
static __always_inline struct sc_start* job_state(struct job j, __u64 create) {
  struct sc_start* s = bpf_task_storage_get(&sc_starts, bpf_get_current_task_btf(), 0, create);
  if (s) cache_job(s, j);
  return s;
}

#endif
