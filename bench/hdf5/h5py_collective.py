# SPDX-License-Identifier: GPL-2.0-only
"""bench/hdf5/h5py.sh's workload, under an MPI launcher: h5py_collective.py FILE KIND creates FILE
with h5py's mpio driver on MPI_COMM_WORLD and writes float64 datasets collectively, each rank its
own block of rows in one assignment (one collective H5Dwrite per dataset and rank): KIND `small`,
100 datasets of one 1 KiB row per rank; `large`, 4 datasets of 16 MiB per rank. Rank 0 prints the
wall time of the writes (file open to close, between barriers): `write_s=S`."""
import sys
import time

import h5py
import numpy as np
from mpi4py import MPI

SHAPES = {"small": (100, 1, 128), "large": (4, 512, 4096)}  # datasets, rows per rank, columns

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
path, kind = sys.argv[1], sys.argv[2]
datasets, rows, cols = SHAPES[kind]
block = np.full((rows, cols), float(rank))
comm.Barrier()
start = time.perf_counter()
with h5py.File(path, "w", driver="mpio", comm=comm) as f:
    for i in range(datasets):
        d = f.create_dataset(f"d{i}", (rows * size, cols), dtype="f8")
        with d.collective:
            d[rank * rows:(rank + 1) * rows, :] = block
comm.Barrier()
if rank == 0:
    print(f"write_s={time.perf_counter() - start:.4f}", flush=True)
