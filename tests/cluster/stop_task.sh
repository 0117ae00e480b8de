# SPDX-License-Identifier: GPL-2.0-only
# The task of the "eziotraced stopped mid-job" step of cluster.slurm_mpi (job.sh): says it runs
# (its recording has started), waits until job.sh has stopped node2's eziotraced, then writes 16 x
# 64 KiB on its node's disk: node1's writes are recorded, node2's fall after its service stopped.
#   stop_task.sh DIR
: > "stop.ready.$(hostname)"
for _ in $(seq 1 1200); do [ -e stop.go ] && break; sleep 0.2; done
dd if=/dev/zero of="$1/stop.$(hostname)" bs=64k count=16 conv=fsync status=none
