#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the initramfs that run-in-vm.sh builds (PID 1 inside the VM). Mounts the kernel file
# systems, loads the modules listed in /ezio/modules.list, mounts the virtio disk, runs the guest
# script between two markers that run-in-vm.sh looks for on the serial console, and powers off.
/bin/busybox --install -s
export PATH=/ezio/bin:/bin:/sbin:/usr/bin:/usr/sbin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64
export HOME=/root TMPDIR=/tmp

fail() {  # setup failed: say why where run-in-vm.sh reports it, then stop the VM
  echo "EZIO-GUEST-SETUP-FAILED: $*"
  echo o > /proc/sysrq-trigger
  poweroff -f
}

mkdir -p /proc /sys /dev /tmp /root /mnt/disk
mount -t proc proc /proc || fail "mount proc"
mount -t sysfs sysfs /sys || fail "mount sysfs"
mount -t devtmpfs devtmpfs /dev || fail "mount devtmpfs"
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug || fail "mount debugfs"
mount -t tracefs tracefs /sys/kernel/tracing || fail "mount tracefs"
mount -t bpf bpf /sys/fs/bpf || fail "mount bpf"
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
echo 1 > /proc/sys/kernel/printk   # keep kernel messages off the console the guest script writes to
ulimit -l unlimited

while read -r ko; do
  [ -n "$ko" ] || continue
  insmod "$ko" || fail "insmod $ko"
done < /ezio/modules.list

# virtio_blk binds the disk while its insmod runs; the device node may lag a little behind.
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -b /dev/vda ] || fail "no /dev/vda (virtio_blk not bound)"
mount -t ext4 /dev/vda /mnt/disk || fail "mount -t ext4 /dev/vda /mnt/disk"
mkdir -p /mnt/disk/out

sh /ezio/guest-run.sh sh
poweroff -f
