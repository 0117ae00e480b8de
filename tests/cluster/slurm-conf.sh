#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Prints the slurm.conf of tests/cluster/run.sh's virtual cluster: node1..nodeN, slurmctld on
# node1, everything as root under the guests' own /var (a tmpfs overlay, lost at power-off).
#   slurm-conf.sh NODES CPUS_PER_NODE MEMORY_MB
set -euo pipefail
nodes=$1 cpus=$2 mem=$3
cat <<CONF
ClusterName=ezio
SlurmctldHost=node1
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# The SPANK plugins (run.sh writes the file: eziotrace's, when the build has it).
PlugStackConfig=/etc/slurm/plugstack.conf
# No cgroup plugins: the guests' cgroups are systemd's, and the processes of a step are found by
# their parentage, as the single-node setup does (docs/cluster.md).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# The nodes' hardware as this file says (TCG guests report what qemu emulates).
SlurmdParameters=config_overrides
# A TCG guest is slow: generous timeouts, so that a busy host does not mark a node down.
SlurmdTimeout=300
MessageTimeout=60
InactiveLimit=0
KillWait=5
NodeName=node[1-$nodes] CPUs=$cpus RealMemory=$((mem / 2)) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
