#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A virtual cluster of qemu guests (TCG), each with its own kernel, booting this machine's root with
# its systemd (tests/qemu/guest-init-systemd.sh), networked over a multicast socket on 127.0.0.1,
# each running munge, eziotraced and slurmd (slurmctld on node1). Runs COMMAND on node1 as a user of
# group eziotrace, in a directory shared by all nodes, then copies that directory to DIR. See
# docs/cluster.md.
#
# usage: run.sh --nodes N [--file PATH]... --out DIR [options] -- COMMAND...
#   --nodes N        guests node1..nodeN (default 2)
#   --file PATH      copied into the shared directory before the boot; repeatable
#   --out DIR        where the shared directory is copied at the end (created; must not exist)
#   --bin-dir DIR    where the build put eziotrace and eziotraced (default: ../../build/bin)
#   --mem MB, --smp N   per guest (default 1024, 1)
#   --timeout S      limit on the whole run (default 600)
#   --keep DIR       keep the work files (initramfs, disks, consoles) in DIR
# COMMAND runs under bash on node1 as user ezuser (group eziotrace), cwd the shared directory (also
# at the same path on every node), the build directory first on PATH, Slurm ready (every node idle).
# exit status: COMMAND's; 124 when the cluster did not finish within --timeout; 125 when the
# harness failed (a boot, a daemon, Slurm's nodes). No guest outlives run.sh (also on a signal).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
qemu_dir=$here/../qemu
prog=run.sh
die() { echo "$prog: error: $*" >&2; exit 125; }

nodes=2 files=() out_dir='' build=$(cd "$here/../.." && pwd)/build/bin mem=1024 smp=1 limit=600 keep=''
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --file) files+=("$2"); shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --bin-dir) build=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ $# -gt 0 ] || die "no COMMAND (usage: $prog --nodes N [--file PATH]... --out DIR -- COMMAND...)"
[[ "$nodes" =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le 16 ] || die "--nodes must be 1..16"
[ -n "$out_dir" ] || die "--out DIR is required"
[ ! -e "$out_dir" ] || die "--out $out_dir exists"
build=$(cd "$build" 2>/dev/null && pwd) || die "--bin-dir $build: no such directory"
# The guests see this machine's / but have a /tmp of their own.
case "$build/" in /tmp/*) die "--bin-dir $build: the guests cannot see /tmp (their own tmpfs)" ;; esac
for b in eziotrace eziotraced; do [ -x "$build/$b" ] || die "no $build/$b (build it first)"; done
for f in ${files[@]+"${files[@]}"}; do [ -e "$f" ] || die "--file $f not found"; done
for t in slurmctld slurmd munged sinfo; do command -v $t >/dev/null || die "$t missing (slurm-wlm, munge)"; done
[ -r /etc/munge/munge.key ] || die "no /etc/munge/munge.key"
[ -x /lib/systemd/systemd ] || die "no systemd on this host (/lib/systemd/systemd)"

# Debian's 6.1 kernel (fetch-kernel.sh): this machine's 6.18 kernel has no image to boot (/boot is
# empty: the machine is itself a guest whose kernel its host supplies).
kdir=$(bash "$qemu_dir/fetch-kernel.sh") || die "cannot obtain qemu or the Debian 6.1 kernel"
# shellcheck source=/dev/null
. "$kdir/kernel.env"

if [ -n "$keep" ]; then
  rm -rf "$keep"; mkdir -p "$keep"; work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/ezio-cluster.XXXXXX")
fi
pids=()
teardown() {  # every guest ends, whatever ended run.sh
  local p
  for p in ${pids[@]+"${pids[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
  for p in ${pids[@]+"${pids[@]}"}; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.3; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  pids=()
  [ -n "$keep" ] || rm -rf "$work"
}
trap teardown EXIT
trap 'echo "$prog: interrupted: stopping the guests" >&2; exit 130' INT TERM HUP

# --- shared directories: the working one (COMMAND's cwd) and the control one (run.sh <-> nodes) ----
shared=$work/shared ctl=$work/ctl
mkdir -p "$shared" "$ctl/state"
for f in ${files[@]+"${files[@]}"}; do cp -rL "$f" "$shared/"; done
user=ezuser uid=4711 gid=4711
chown -R "$uid:$gid" "$shared"
chmod 1777 "$ctl/state"
net=10.77.0
{
  echo "127.0.0.1 localhost"
  for i in $(seq 1 "$nodes"); do echo "$net.$i node$i"; done
} > "$ctl/hosts"
cat > "$ctl/cluster.env" <<EOF
EZIO_NODES=$nodes
EZIO_NET=$net
EZIO_USER=$user
EZIO_UID=$uid
EZIO_GID=$gid
EZIO_BUILD=$build
EZIO_CLUSTER_DIR=$shared
EZIO_WAIT_NODES=240
EOF
{ printf '%q ' "$@"; echo; } > "$ctl/command"
bash "$here/slurm-conf.sh" "$nodes" "$smp" "$mem" > "$ctl/slurm.conf"
# srun --eziotrace (docs/cluster.md): the build's SPANK plugin on every node, `required` so that a
# plugin Slurm cannot load stops srun with the reason; none when the build has none (no spank.h).
if [ -e "$build/spank_eziotrace.so" ]; then
  echo "required $build/spank_eziotrace.so eziotrace=$build/eziotrace" > "$ctl/plugstack.conf"
else
  : > "$ctl/plugstack.conf"
fi

# --- initramfs: guest-init-systemd.sh, the test units, node.sh as the guest script -----------------
root=$work/initramfs
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,ezio/bin,ezio/files}
cp /bin/busybox "$root/bin/busybox"
cp "$qemu_dir/guest-init-systemd.sh" "$root/init"
cp -r "$qemu_dir/systemd" "$root/ezio/systemd"
cp "$qemu_dir/guest-run.sh" "$root/ezio/guest-run.sh"
cp "$here/node.sh" "$root/ezio/guest.sh"
: > "$root/ezio/env"
chmod 755 "$root/init"
# shellcheck source=../qemu/kmodules.sh
. "$qemu_dir/kmodules.sh"
kmod_init "$kdir/lib/modules/$EZIO_KVER" "$root"
for m in virtio_pci virtio_blk crc32c_generic ext4 loop 9pnet_virtio 9p overlay virtio_net; do
  kmod_add "$m"
done
(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initrd.gz"

# --- boot: one guest after the other, a few seconds apart, so their monotonic clocks differ -------
port=$((20000 + RANDOM % 20000))   # the multicast group of this cluster only
start=$SECONDS
boot_node() {  # boot_node I: starts node I in the background, its pid appended to pids
  local i=$1 disk=$work/disk$1.img
  truncate -s 256M "$disk"
  # No journal: its thread commits on a timer of its own, at moments no job's recording covers,
  # and a job's block requests are compared with the device's counters (docs/cluster.md).
  mkfs.ext4 -q -F -O ^has_journal -L "node$i" "$disk" || die "mkfs.ext4 of node$i's disk failed"
  # --pdeathsig: even a run.sh killed with SIGKILL (no trap runs) takes its guests with it.
  setpriv --pdeathsig KILL nice qemu-system-x86_64 -machine q35 -accel tcg -cpu max -smp "$smp" -m "$mem" \
    -display none -monitor none -serial "file:$work/console$i.log" -no-reboot \
    -kernel "$kdir/vmlinuz" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 oops=panic no_timer_check systemd.unit=ezio-test.target systemd.show_status=error ezio.node=$i" \
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
    -virtfs "local,path=$shared,mount_tag=cluster,security_model=passthrough" \
    -virtfs "local,path=$ctl,mount_tag=ctl,security_model=passthrough" \
    -netdev "socket,id=n0,mcast=230.0.0.1:$port,localaddr=127.0.0.1" \
    -device "virtio-net-pci,netdev=n0,mac=52:54:00:77:00:$(printf %02x "$i")" \
    -drive "file=$disk,if=virtio,format=raw" </dev/null >"$work/qemu$i.out" 2>&1 &
  pids+=($!)
}
stagger=3
for i in $(seq 1 "$nodes"); do
  boot_node "$i"
  [ "$i" -eq "$nodes" ] || sleep $stagger
done

console() { tr -d '\r' < "$work/console$1.log" 2>/dev/null || true; }
show_failure() {
  local i
  for i in $(seq 1 "$nodes"); do
    echo "--- node$i console (tail)" >&2
    console "$i" | tail -n 25 >&2
    if [ -s "$work/qemu$i.out" ]; then echo "--- node$i qemu" >&2; cat "$work/qemu$i.out" >&2; fi
  done
}
# --- wait: node1 powers off once the command ended; the others once node1 said done ----------------
status=''
while :; do
  if [ $((SECONDS - start)) -ge "$limit" ]; then
    echo "$prog: error: the cluster did not finish within ${limit}s" >&2
    show_failure; exit 124
  fi
  if grep -q '^EZIO-CLUSTER-SETUP-FAILED' "$work/console1.log" 2>/dev/null ||
     ls "$ctl/state"/failed.node* >/dev/null 2>&1; then
    echo "$prog: error: a node could not set up:" >&2
    console 1 | sed -n '/^EZIO-GUEST-BEGIN$/,$p' >&2
    cat "$ctl/state"/failed.node* >&2 2>/dev/null || true
    show_failure; exit 125
  fi
  for i in $(seq 1 "$nodes"); do
    kill -0 "${pids[$((i - 1))]}" 2>/dev/null && continue
    if [ "$i" -ne 1 ] && [ ! -e "$ctl/state/done" ]; then
      echo "$prog: error: node$i stopped before the command ended" >&2
      show_failure; exit 125
    fi
  done
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 1
done
wait "${pids[0]}" || true
# The others leave on their own once they see done; a few seconds' grace, then teardown kills them.
for _ in $(seq 1 20); do
  alive=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive -eq 0 ] && break
  sleep 0.5
done
elapsed=$((SECONDS - start))

log=$(console 1)
grep -q '^EZIO-CLUSTER-COMMAND-END rc=' <<<"$log" || {
  echo "$prog: error: node1 did not run the command" >&2
  sed -n '/^EZIO-GUEST-BEGIN$/,$p' <<<"$log" >&2
  show_failure; exit 125
}
for i in $(seq 1 "$nodes"); do console "$i" | grep '^cluster: node[0-9]*: ready' >&2 || true; done
grep '^cluster: node1: .* idle in Slurm' <<<"$log" >&2 || true
sed -n '/^EZIO-CLUSTER-COMMAND-BEGIN$/,/^EZIO-CLUSTER-COMMAND-END rc=/{/^EZIO-CLUSTER-COMMAND-/d;p}' <<<"$log"
status=$(sed -n 's/^EZIO-CLUSTER-COMMAND-END rc=\([0-9]*\)$/\1/p' <<<"$log" | tail -n 1)
echo "$prog: $nodes nodes, ${elapsed}s from the first boot to the last power-off; command status $status" >&2
mkdir -p "$out_dir"
cp -r "$shared/." "$out_dir/"
exit "$status"
