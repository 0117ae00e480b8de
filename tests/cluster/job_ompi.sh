# SPDX-License-Identifier: GPL-2.0-only
# The steps of cluster.slurm_mpi with several ranks per node (docs/cluster.md, section 4), sourced
# by job.sh (its step function) in the same boot, run in the shared directory's ompi/ (the ranks'
# result files would else replace the 2-rank jobs' ones): srun with two tasks per node writing
# 1 MiB each, one after the other (each task recorded by a session of its own, the second's
# started once the first's I/O is done, merged under its host), then Open MPI's
# mpirun across both nodes (mpirun and its ranks on node1, node2's orted and its ranks started by
# srun through the launch agent eziotrace sets). Each disk's counters are read just before and after each step.
# check_ompi.py checks them on the host.
ompi_steps() {
  mkdir -p ompi && cd ompi || return 1
  nstat() { srun -N 2 bash -c "cat /sys/block/vda/stat > $1.\$(hostname).$2"; }
  srun -N 2 sync -f /mnt/disk
  nstat ttstat before
  # Not MPICH: its recorded ranks under srun's PMI-2 now and then never end (docs/cluster.md).
  # A node's second task starts (its recording with it) once the first's I/O is done: srun runs
  # this task prolog before each task's program, here eziotrace's wrapper (tasks_task.sh). On
  # node2 it starts only once the first's session has ended, after a write of the prolog's own
  # (outside the recorded tree, while no session is open): the host's windows leave a gap in
  # which its disk completes requests, that the archive must count as between its sessions.
  cat > stagger.sh <<EOF
#!/bin/sh
read -r host < /proc/sys/kernel/hostname
/bin/mkdir "$PWD/tasks.first.\$host" 2>/dev/null && exit 0
for _ in \$(/usr/bin/seq 1 1200); do [ -e "$PWD/tasks.done.\$host" ] && break; /bin/sleep 0.2; done
[ "\$host" = node2 ] || exit 0
for _ in \$(/usr/bin/seq 1 1200); do
  /bin/ls "$PWD/ktasks.parts/\$host"*/eziotrace-clock.json > /dev/null 2>&1 && break
  /bin/sleep 0.2
done
/bin/dd if=/dev/zero of=/mnt/disk/gap.\$host bs=64k count=4 conv=fsync status=none
/bin/sync -f /mnt/disk
exit 0
EOF
  chmod +x stagger.sh
  step ktasks eziotrace record -o ktasks -- srun -N 2 -n 4 -O --task-prolog="$PWD/stagger.sh" \
    bash ../tasks_task.sh /mnt/disk ktasks.parts
  nstat ttstat after
  # Open MPI over TCP (ob1; no single-copy between a node's ranks: the guests' ptrace rules are
  # not the test's business); 4 slots, 2 per node, so that mpirun needs no oversubscription.
  nstat ostat before
  OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_vader_single_copy_mechanism=none \
    step kompi salloc -N 2 -n 4 -O eziotrace record -o kompi -- mpirun -np 4 \
    bash ../node_task.sh ../mpi_node_io_ompi /mnt/disk
  nstat ostat after
  cd ..
}
