/* SPDX-License-Identifier: GPL-2.0-only */
/* The ring buffers of a session, shared by the BPF programs (common.bpf.h) and the recorder
 * (recorder/load/ring_buffers.h). */
#ifndef EZIO_RINGS_H
#define EZIO_RINGS_H

/* Ring buffers one session may have: its records go to ring cpu % session_rings[slot], so that
 * CPUs do not contend for one ring's lock (docs/costs.md, Rings per CPU). Entry
 * slot * EZIO_MAX_RINGS + ring of the map of rings. */
#define EZIO_MAX_RINGS 128

#endif
