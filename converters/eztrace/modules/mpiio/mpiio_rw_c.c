// SPDX-License-Identifier: GPL-2.0-only
// MPI 4's large-count `_c` forms (MPICH 4.0 has them; an MPI 3 library, Open MPI 4.1, does not).
#include <mpi.h>

#if MPI_VERSION >= 4
#include "mpiio_rw.inc"

MPIIO_ALL_FORMS(_c, MPI_Count)
#endif
