# SPDX-License-Identifier: GPL-2.0-only
# The steps of cluster.slurm_mpi with EZTrace's layers (docs/cluster.md, "EZTrace's layers across
# nodes"), sourced by job.sh (its step function) in the same boot: one rank per node with the
# modules chosen as on one node (posixio, and mpich found in the program), then two tasks per node
# (-O: one CPU per node) with -t mpich,posixio. check_layers.py checks them on the host.
layers_steps() {
  srun -N 2 sync -f /mnt/disk
  step ulayers eziotrace -o ulayers -- srun -N 2 -n 2 --mpi=pmi2 ./mpi_node_io /mnt/disk
  step utasks eziotrace -t mpich,posixio -o utasks -- srun -N 2 -n 4 -O --mpi=pmi2 \
    ./mpi_node_io /mnt/disk
  for s in ulayers utasks; do
    eziotrace check "$s" > "$s.check" 2>&1
    echo $? >> "$s.check"
  done
}
