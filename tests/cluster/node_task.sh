# SPDX-License-Identifier: GPL-2.0-only
# The task of the one-command step of cluster.slurm_mpi (job.sh): the MPI rank, then a sync of its
# node's disk, so that what the rank left dirty (its file's inode, the bitmaps) is written inside
# the recording, not by the flusher after it ended and before job.sh reads the disk's counters.
#   node_task.sh PROGRAM [ARGS...]
"$@"
rc=$?
sync -f /mnt/disk
exit $rc
