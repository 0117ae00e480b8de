# SPDX-License-Identifier: GPL-2.0-only
"""The h5py workload of the hdf5 module's test (tests/e2e/hdf5): h5py_writes.py FILE ROWS writes
ROWS rows of 100 doubles into /data, one assignment (one H5Dwrite) each, then /once (10 doubles,
one H5Dwrite) and an attribute /@n."""
import sys

import h5py
import numpy as np

rows = int(sys.argv[2])
with h5py.File(sys.argv[1], "w") as f:
    data = f.create_dataset("data", (rows, 100), dtype="f8")
    for i in range(rows):
        data[i, :] = np.arange(100.0)
    f.create_dataset("once", data=np.zeros(10))
    f.attrs["n"] = rows
print("h5py_writes done")
