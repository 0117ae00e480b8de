// SPDX-License-Identifier: GPL-2.0-only
/* The flight recorder's table of cgroups (bpf/flight.bpf.h), shared by the BPF programs and the
 * recorder (recorder/load/kernel_programs_flight.cpp) like record.h. */
#ifndef EZIO_FLIGHT_H
#define EZIO_FLIGHT_H

#ifdef __bpf__
/* vmlinux.h provides __u32 */
#else
#include <linux/types.h>
#endif

/* The deepest level (a cgroup's depth below the root) a flight-recorded cgroup may be at, plus 1:
 * flight_levels' bits (flight.bpf.h). */
#define EZIO_FLIGHT_MAX_LEVEL 32

/* Value of the table, per cgroup id: the session of the job and the uid of its owner, whose
 * processes only join it. */
struct ezio_flight_job {
  __u32 session;
  __u32 uid;
};

#endif
