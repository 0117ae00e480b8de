// SPDX-License-Identifier: GPL-2.0-only
/* The symbol by which the preload helper knows EZTrace's MPI module is loaded, preloaded as
 * EZTrace's libraries are (tests/unit/eztrace/mpi_finalize_test.cpp). */
int ezt_mpi_initialize_trace(void) { return 0; }
