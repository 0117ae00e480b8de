# SPDX-License-Identifier: GPL-2.0-only
# The task of the one-command step of cluster.slurm_mpi (job.sh): reads its node's disk counters
# (/sys/block/vda/stat) before and after the MPI rank, from inside the recording, so that the
# counters' delta and the requests recorded on that host cover the same moments.
#   node_task.sh PREFIX PROGRAM [ARGS...]   (writes PREFIX.<host>.before and .after)
prefix=$1
shift
cat /sys/block/vda/stat > "$prefix.$(hostname).before"
"$@"
rc=$?
cat /sys/block/vda/stat > "$prefix.$(hostname).after"
exit $rc
