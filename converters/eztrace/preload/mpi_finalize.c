// SPDX-License-Identifier: GPL-2.0-only
/* Part of the preload helper (eziotrace_preload.c): MPI_Finalize, reached from EZTrace's own
 * MPI_Finalize wrapper (the helper comes after EZTrace in LD_PRELOAD, and EZTrace looks up the
 * next definition), after EZTrace's finalization and before MPICH's. In an MPICH process traced
 * by EZTrace's MPI module it first runs a barrier on MPI_COMM_WORLD.
 *
 * Why: MPICH 4.0's ch4:ucx finalization disconnects every peer (ucp_disconnect_nb, which waits
 * until what was sent to that peer is complete, and may need the peer's progress for that), then
 * enters a PMI barrier, a blocking read on the PMI socket, in which it no longer progresses UCX.
 * A rank that gets there first leaves a peer whose disconnect still waits on it spinning forever:
 * both ranks hang after their trace is written (docs/cluster.md, "EZTrace's layers across
 * nodes"; MPICH removed that PMI barrier later, pmodels/mpich#6596). EZTrace's finalization sends
 * its definitions between the ranks right before: over TCP between nodes, that traffic is what the
 * disconnects wait on. A barrier after it completes every rank's earlier traffic at both ends (the
 * peer's answers come back in order before the barrier's own), so the disconnects that follow have
 * nothing to wait for. The barrier's own last messages are then the traffic right before the
 * disconnects, and a rank leaves the barrier before its peer has taken what it sent: that hung 5
 * of 30 runs (UCX over TCP, both cores busy; the program alone with a barrier right before
 * MPI_Finalize, 2 of 30). A pause after the barrier gives every peer the time to take those
 * messages before anyone disconnects: 0 of 70 (docs/cluster.md). Only in EZTrace's MPI mode under
 * MPICH, where that traffic exists and MPI_COMM_WORLD is MPICH's fixed handle. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <time.h>

typedef int (*finalize_fn)(void);
typedef int (*barrier_fn)(int);

/* MPICH's MPI_COMM_WORLD (mpi.h: a constant of its ABI, not a pointer as Open MPI's). */
static const int kMpichCommWorld = 0x44000000;

/* Far above a scheduling delay on a loaded node, small beside EZTrace's own finalization. */
static const long kPauseAfterBarrierNs = 200L * 1000 * 1000;

static int eztrace_mpi_under_mpich(void) {
  return dlsym(RTLD_DEFAULT, "ezt_mpi_initialize_trace") != NULL &&
         dlsym(RTLD_DEFAULT, "MPIR_Err_create_code") != NULL;
}

__attribute__((visibility("default"))) int MPI_Finalize(void) {
  finalize_fn next = (finalize_fn)dlsym(RTLD_NEXT, "MPI_Finalize");
  if (eztrace_mpi_under_mpich()) {
    barrier_fn barrier = (barrier_fn)dlsym(RTLD_DEFAULT, "PMPI_Barrier");
    if (barrier) {
      barrier(kMpichCommWorld);
      const struct timespec pause = {0, kPauseAfterBarrierNs};
      nanosleep(&pause, NULL);
    }
  }
  return next ? next() : 0;
}
