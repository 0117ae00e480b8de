# SPDX-License-Identifier: GPL-2.0-only
"""The h5py + mpi4py workload of the hdf5 module's test (tests/e2e/hdf5): run under an MPI
launcher, h5py_mpi_collective.py FILE ROWS COLS opens FILE with the mpio driver on
MPI_COMM_WORLD, creates the ROWS x COLS float64 dataset /d (ROWS a multiple of the number of
ranks) and has each rank write its own block of rows collectively, one assignment (one
H5Dwrite) per row, then read its block back collectively (one H5Dread). Prints one line per rank:
`rank=R pid=P done`."""
import os
import sys

import h5py
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mine = rows // size
first = rank * mine
with h5py.File(path, "w", driver="mpio", comm=comm) as f:
    d = f.create_dataset("d", (rows, cols), dtype="f8")
    for r in range(first, first + mine):
        with d.collective:
            d[r, :] = np.full(cols, float(r))
    # read_direct: d[...] reads through h5py's fast path, which ignores the transfer plist.
    back = np.empty((mine, cols))
    with d.collective:
        d.read_direct(back, np.s_[first:first + mine, :])
    assert (back[:, 0] == np.arange(first, first + mine, dtype="f8")).all()
print(f"rank={rank} pid={os.getpid()} done", flush=True)
