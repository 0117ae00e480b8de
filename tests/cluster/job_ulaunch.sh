# SPDX-License-Identifier: GPL-2.0-only
# The steps of cluster.slurm_mpi with EZTrace's layers of ranks started by an MPI launcher across
# the nodes (docs/cluster.md, "MPI launchers across hosts"), sourced by job.sh (its step and
# once_more functions) in the same boot: `eziotrace -o DIR -- mpiexec.hydra -bootstrap slurm ...`
# (MPICH, each node's proxy started by srun) and `eziotrace -o DIR -- mpirun ...` (Open MPI,
# mpirun on node1, node2's orted started by srun), one rank per node, the modules chosen as on one
# node (posixio, and the program's MPI). check_layers.py checks each on the host.
uhydra_run() {
  srun -N 2 sync -f /mnt/disk
  step uhydra salloc -N 2 eziotrace -o uhydra -- mpiexec.hydra -bootstrap slurm -np 2 \
    ./mpi_node_io /mnt/disk
}
ulaunch_steps() {
  once_more uhydra uhydra_run
  srun -N 2 sync -f /mnt/disk
  # Open MPI over TCP, as kompi (job_ompi.sh); one slot per node: rank 1 runs under node2's orted.
  OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_vader_single_copy_mechanism=none \
    step uompi salloc -N 2 -n 2 eziotrace -o uompi -- mpirun -np 2 ./mpi_node_io_ompi /mnt/disk
}
