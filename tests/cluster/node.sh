# SPDX-License-Identifier: GPL-2.0-only
# Guest script of every node of tests/cluster/run.sh (bash, root, under the host's systemd booted by
# tests/qemu/guest-init-systemd.sh). Node I (ezio.node=I on the kernel command line) joins the
# virtual cluster: its address, the shared directories, the user, munge, eziotraced, slurmd (and
# slurmctld on node 1). Node 1 then waits for every node, runs the command as the user in the shared
# directory and says its status; the others wait until node 1 says it is done.
set -u
node=$(sed -n 's/.*ezio\.node=\([0-9]*\).*/\1/p' /proc/cmdline)
ctl=/ezio-ctl
say() { echo "cluster: node$node: $*"; }
fail() {  # a setup step failed: say so where run.sh and node 1 look, then stop this node
  say "SETUP FAILED: $*"
  local f
  for f in /var/log/slurm/*.log; do [ -e "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done
  echo "EZIO-CLUSTER-SETUP-FAILED: node$node: $*"
  [ -d $ctl/state ] && echo "$*" > "$ctl/state/failed.node$node"
  exit 125
}
share() {  # share TAG DIR: a read-write 9p share of run.sh; cache=none, as other nodes write to it
  mkdir -p "$2"
  mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 "$1" "$2" ||
    fail "mount -t 9p $1 $2"
}
[ -n "$node" ] || fail "no ezio.node= on the kernel command line"
share ctl $ctl
# shellcheck source=/dev/null
. $ctl/cluster.env
share cluster "$EZIO_CLUSTER_DIR"

# --- network: a private subnet on the one virtio NIC, names in /etc/hosts -----------------------
ip link set lo up
dev=$(ls /sys/class/net | grep -v '^lo$' | head -n 1)
[ -n "$dev" ] || fail "no network interface (virtio_net)"
ip addr add "$EZIO_NET.$node/24" dev "$dev" && ip link set "$dev" up || fail "ip addr on $dev"
hostname "node$node"
echo "node$node" > /etc/hostname
cp $ctl/hosts /etc/hosts

# --- the user of group eziotrace, the same ids on every node ------------------------------------
getent group eziotrace >/dev/null || groupadd -g "$EZIO_GID" eziotrace || fail "groupadd eziotrace"
id "$EZIO_USER" >/dev/null 2>&1 ||
  useradd -m -u "$EZIO_UID" -U -G eziotrace -s /bin/bash "$EZIO_USER" || fail "useradd $EZIO_USER"

# The node's own disk (ext4 on /dev/vda, mounted by the init) is the jobs' local scratch.
chmod 1777 /mnt/disk
# noatime: a job's reads would otherwise dirty its inodes again, written back at moments no
# recording covers, and the job's block requests are compared with the device's counters.
mount -o remount,noatime /mnt/disk || fail "remount /mnt/disk noatime"

# --- daemons ------------------------------------------------------------------------------------
systemctl start munge.service || fail "munge did not start"
# eziotraced binds /run/eziotrace/eziotraced.sock itself and goes to the background once it serves.
"$EZIO_BUILD/eziotraced" || fail "eziotraced did not start"
mkdir -p /etc/slurm /var/spool/slurmd /var/spool/slurmctld /var/log/slurm
cp $ctl/slurm.conf /etc/slurm/slurm.conf
cp $ctl/plugstack.conf /etc/slurm/plugstack.conf
# The guests boot systemd's unified cgroup hierarchy, where slurmd (started outside a unit) would
# ask systemd over D-Bus, which this boot does not start, for a scope: it makes its cgroups itself.
echo "IgnoreSystemd=yes" > /etc/slurm/cgroup.conf
if [ "$node" -eq 1 ]; then slurmctld || fail "slurmctld did not start"; fi
slurmd || fail "slurmd did not start"
# CLOCK_MONOTONIC counts from this node's boot: run.sh reports how far apart the nodes are.
say "ready at uptime $(cut -d' ' -f1 /proc/uptime) s"
: > "$ctl/state/ready.node$node"

# Root on this node for the command (which runs as the user on node1; docs/cluster.md, "Root on
# a node"): it writes one action into $ctl/state/admin.node<I>.<ID> (by a rename: the file is
# whole when seen); the status of the action comes back in done.admin.node<I>.<ID>.
admin_requests() {
  local f action rc pids
  for f in "$ctl/state/admin.node$node".*; do
    [ -e "$f" ] || continue
    action=$(cat "$f")
    rm -f "$f"
    case $action in
      stop-eziotraced)  # as `systemctl stop` would: SIGTERM, then wait until it has gone
        pids=$(pidof eziotraced)
        rc=1
        if [ -n "$pids" ] && kill -TERM $pids; then
          for _ in $(seq 1 300); do kill -0 $pids 2>/dev/null || { rc=0; break; }; sleep 0.1; done
        fi ;;
      start-eziotraced) "$EZIO_BUILD/eziotraced" && rc=0 || rc=1 ;;
      *) rc=2 ;;
    esac
    say "admin: $action: status $rc"
    echo $rc > "$ctl/state/tmp.done.${f##*/}"
    mv "$ctl/state/tmp.done.${f##*/}" "$ctl/state/done.${f##*/}"
  done
}

if [ "$node" -ne 1 ]; then
  while [ ! -e $ctl/state/done ]; do
    admin_requests
    sleep 0.5
  done
  exit 0
fi

# --- node 1: every node up in Slurm, then the command ---------------------------------------------
idle=0
for _ in $(seq 1 "$EZIO_WAIT_NODES"); do
  ls $ctl/state/failed.node* >/dev/null 2>&1 && fail "a node failed: $(cat $ctl/state/failed.node*)"
  idle=$(sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$')
  [ "$idle" -eq "$EZIO_NODES" ] && break
  sleep 1
done
if [ "$idle" -ne "$EZIO_NODES" ]; then
  sinfo -N 2>&1
  tail -n 20 /var/log/slurm/slurmctld.log
  fail "$idle of $EZIO_NODES nodes idle in Slurm after ${EZIO_WAIT_NODES}s"
fi
say "$EZIO_NODES nodes idle in Slurm at uptime $(cut -d' ' -f1 /proc/uptime) s"
echo "EZIO-CLUSTER-COMMAND-BEGIN"
cd "$EZIO_CLUSTER_DIR"
setpriv --reuid="$EZIO_USER" --regid="$EZIO_USER" --init-groups \
  env -i HOME="/home/$EZIO_USER" USER="$EZIO_USER" LOGNAME="$EZIO_USER" SHELL=/bin/bash \
  PATH="$EZIO_BUILD:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
  bash $ctl/command
rc=$?
echo "EZIO-CLUSTER-COMMAND-END rc=$rc"
: > $ctl/state/done
exit 0
