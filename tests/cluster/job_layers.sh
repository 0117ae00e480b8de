# SPDX-License-Identifier: GPL-2.0-only
# The step of cluster.slurm_mpi with EZTrace's layers (docs/cluster.md, "EZTrace's layers across
# nodes"), sourced by job.sh (its step function) in the same boot: `eziotrace -o ulayers -- srun
# ...`, one rank per node, the modules chosen as on one node (posixio, and mpich found in the
# program). check_layers.py checks it on the host.
layers_steps() {
  srun -N 2 sync -f /mnt/disk
  step ulayers eziotrace -o ulayers -- srun -N 2 -n 2 --mpi=pmi2 ./mpi_node_io /mnt/disk
}
