// SPDX-License-Identifier: GPL-2.0-only
/* The names of the cgroups made while the metrics run (docs/metrics.md, "The job"). The collector
 * names a series' cgroup by walking the cgroup2 mount at a scrape; a cgroup made and removed
 * between two scrapes (a short Slurm step, a `systemd-run --wait` unit, a cron job) is gone by then
 * and its series could only be named by its id. Its path is kept here when it is made, read by the
 * collector for the cgroups it cannot find, and dropped with their series. Cgroup paths are what
 * the cgroup2 mount shows every user: no file name of anyone's. */
#ifndef EZIO_METRICS_CGROUPS_BPF_H
#define EZIO_METRICS_CGROUPS_BPF_H

#include "metrics.h"

struct ezio_cgroup_name {
  char path[EZIO_M_CGROUP_PATH];
};

/* cgroup v2 id -> its path under the mount. LRU: should more cgroups be made between two scrapes
 * than it holds, the oldest names go (their series then named by id, as before this table). */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, EZIO_M_CGROUP_NAMES);
  __type(key, __u64);
  __type(value, struct ezio_cgroup_name);
} cgroup_names SEC(".maps");

/* A path does not fit the programs' stack: built here, then copied into the table. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ezio_cgroup_name);
} cgroup_name_scratch SEC(".maps");

/* Only the default hierarchy's (cgroup v2: hierarchy 0); a hybrid host's v1 hierarchies number
 * their cgroups apart. */
SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(ezio_m_cgroup_mkdir, struct cgroup* cgrp, const char* path) {
  if (BPF_CORE_READ(cgrp, root, hierarchy_id) != 0) return 0;
  __u32 zero = 0;
  struct ezio_cgroup_name* name = bpf_map_lookup_elem(&cgroup_name_scratch, &zero);
  if (!name) return 0;
  if (bpf_probe_read_kernel_str(name->path, sizeof(name->path), path) <= 0) return 0;
  __u64 id = BPF_CORE_READ(cgrp, kn, id);
  bpf_map_update_elem(&cgroup_names, &id, name, BPF_ANY);
  return 0;
}

#endif
