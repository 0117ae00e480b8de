# SPDX-License-Identifier: GPL-2.0-only
# The command of the ctest test cluster.slurm_mpi (cluster-test.sh), run by tests/cluster/run.sh on
# node1 as a member of group eziotrace, in the shared directory, which holds mpi_node_io. Writes
# what it saw into that directory; cluster-test.sh checks it on the host.
set -u
rc=0
step() {  # step NAME COMMAND...: runs it, its output in NAME.out, its status in NAME.rc
  local name=$1
  shift
  timeout 300 "$@" > "$name.out" 2>&1
  echo $? > "$name.rc"
  echo "--- $name (status $(cat "$name.rc"))"
  cat "$name.out"
}
step hostname srun -N 2 hostname
# MPICH over TCP between the nodes, started by slurmstepd through PMI-2.
step mpi srun -N 2 -n 2 --mpi=pmi2 ./mpi_node_io /mnt/disk
# Per-node recording, the simplest way: each task records its own rank through its node's
# eziotraced (this user is in group eziotrace; no root), one archive per rank (docs/cluster.md).
# Each measures its clock against node1's at its start and end (--clock-ref): 2 ranks x 2.
timeout 300 eziotrace clock serve --port 7472 --connections 4 > clock-ref.out 2>&1 &
ref=$!
step record srun -N 2 -n 2 --mpi=pmi2 bash -c \
  'exec eziotrace record --clock-ref node1:7472 -o "rec.$SLURM_PROCID" -- ./mpi_node_io /mnt/disk'
wait $ref
echo $? > clock-ref.rc
# The same job recorded by one command (docs/cluster.md): each task run by srun under its node's
# eziotraced, the parts merged into one archive when the step ends. What earlier steps left dirty
# on the disks is written first; each disk's counters are read just before and after the step, so
# that their delta holds the recording's requests and nothing else (the task syncs at its end).
srun -N 2 sync -f /mnt/disk
kstat() { srun -N 2 bash -c "cat /sys/block/vda/stat > kstat.\$(hostname).$1"; }
kstat before
step kstep eziotrace record -o kstep -- srun -N 2 -n 2 --mpi=pmi2 bash node_task.sh \
  ./mpi_node_io /mnt/disk
kstat after
# EZTrace's layers over the nodes, one and two tasks per node (job_layers.sh): not run yet, the
# ranks do not exit after EZTrace's finalization under srun on this cluster (docs/cluster.md).
# The clocks: node2 answers, node1 measures twice, a few seconds apart (docs/cluster.md, Clocks).
srun -N 1 -w node2 eziotrace clock serve --port 7471 --connections 2 > clock-serve.out 2>&1 &
serve=$!
step clock1 eziotrace clock measure node2 --port 7471 --rounds 500
sleep 5
step clock2 eziotrace clock measure node2 --port 7471 --rounds 500
wait $serve
echo $? > clock-serve.rc
exit $rc
