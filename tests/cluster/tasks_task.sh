# SPDX-License-Identifier: GPL-2.0-only
# A task of the "two tasks per node" step of cluster.slurm_mpi (job_ompi.sh), whose two recording
# windows on a node overlap without either holding the other's I/O: the node's first task writes
# 16 x 64 KiB on the node's disk with an fsync, syncs the disk, says so (the node's second task,
# held by the step's task prolog stagger.sh, starts only then), waits until the second runs and
# ends; the second waits until the first's part is published (its session ended), then does the
# same I/O. The host's unattributed and not-issued counts are then right only as the union of the
# two sessions' windows (docs/cluster.md, "Several parts of one host"). On node2 the first task
# ends without waiting: the second starts after its session, leaving a gap between the windows.
#   tasks_task.sh DIR PARTS_DIR
host=$(hostname)
io() {
  dd if=/dev/zero of="$1/task.$SLURM_PROCID" bs=64k count=16 conv=fsync status=none
  local rc=$?
  sync -f "$1"
  return $rc
}
if [ ! -e "tasks.done.$host" ]; then
  io "$1"
  rc=$?
  : > "tasks.done.$host"
  # On node2 the second task starts once this one's session has ended (stagger.sh): no wait.
  [ "$host" = node2 ] && exit $rc
  for _ in $(seq 1 1200); do [ -e "tasks.ready.$host" ] && break; sleep 0.2; done
else
  : > "tasks.ready.$host"
  for _ in $(seq 1 1200); do
    ls "$2/$host"*/eziotrace-clock.json > /dev/null 2>&1 && break
    sleep 0.2
  done
  io "$1"
  rc=$?
fi
exit $rc
