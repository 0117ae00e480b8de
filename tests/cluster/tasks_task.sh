# SPDX-License-Identifier: GPL-2.0-only
# A task of the "two tasks per node" step of cluster.slurm_mpi (job_ompi.sh): waits until every
# task of the step runs (its recording has started), writes 16 x 64 KiB on its node's disk with an
# fsync, syncs the disk, then waits until every task has done so. The sessions of one node's tasks
# are then all open while any of them does I/O, as the ranks of an MPI job are (MPI_Init and
# MPI_Finalize): the host's unattributed count is its largest session's (docs/cluster.md, section 3).
#   tasks_task.sh DIR TASKS
: > "tasks.ready.$SLURM_PROCID"
for _ in $(seq 1 1200); do [ "$(ls tasks.ready.* 2>/dev/null | wc -l)" -ge "$2" ] && break; sleep 0.2; done
dd if=/dev/zero of="$1/task.$SLURM_PROCID" bs=64k count=16 conv=fsync status=none
rc=$?
sync -f "$1"
: > "tasks.done.$SLURM_PROCID"
for _ in $(seq 1 1200); do [ "$(ls tasks.done.* 2>/dev/null | wc -l)" -ge "$2" ] && break; sleep 0.2; done
exit $rc
