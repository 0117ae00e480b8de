// SPDX-License-Identifier: GPL-2.0-only
/* Calls MPI_Finalize, which fake_mpich defines and the preload helper wraps when preloaded
 * (tests/unit/eztrace/mpi_finalize_test.cpp). */
int MPI_Finalize(void);

int main(void) { return MPI_Finalize(); }
