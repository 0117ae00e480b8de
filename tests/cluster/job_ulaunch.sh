# SPDX-License-Identifier: GPL-2.0-only
# The steps of cluster.slurm_mpi with EZTrace's layers of ranks started by an MPI launcher across
# the nodes (docs/cluster.md, "MPI launchers across hosts"), sourced by job.sh (its step and
# once_more functions) in the same boot, run in the shared directory's ulaunch/ (the ranks' result
# files would else replace the 2-rank jobs' ones): `eziotrace -o DIR -- mpiexec.hydra -bootstrap
# slurm ...` (MPICH, each node's proxy started by srun) and `eziotrace -o DIR -- mpirun ...` (Open
# MPI, mpirun on node1, node2's orted started by srun), four ranks, two per node (one part per
# node holding both its ranks), the modules chosen as on one node (posixio, and the program's
# MPI). Each disk's counters are read just before and after each step. check_layers.py checks
# each on the host.
ustat() { srun -N 2 bash -c "cat /sys/block/vda/stat > $1.\$(hostname).$2"; }
uhydra_run() {
  srun -N 2 sync -f /mnt/disk
  ustat uhstat before
  step uhydra salloc -N 2 -n 4 -O eziotrace -o uhydra -- mpiexec.hydra -bootstrap slurm -np 4 \
    -ppn 2 ../mpi_node_io /mnt/disk
  ustat uhstat after
}
ulaunch_steps() {
  mkdir -p ulaunch && cd ulaunch || return 1
  once_more uhydra uhydra_run
  srun -N 2 sync -f /mnt/disk
  ustat uostat before
  # Open MPI over TCP, as kompi (job_ompi.sh); two slots per node: ranks 2 and 3 run under
  # node2's orted.
  OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_vader_single_copy_mechanism=none \
    step uompi salloc -N 2 -n 4 -O eziotrace -o uompi -- mpirun -np 4 ../mpi_node_io_ompi \
    /mnt/disk
  ustat uostat after
  cd ..
}
